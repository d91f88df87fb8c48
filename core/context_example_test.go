//go:build !agentrt_nocontext

package core_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agentrt/agentrt/core"
)

// A Go model hands the run's context to net/http as it is: cancelling the
// run, or its timeout, aborts the request, and values the host put on the
// context it started the run with reach the model.
func ExampleModelFunc_httpRequest() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "upstream says hi")
	}))
	defer srv.Close()

	type userKey struct{}
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(hreq)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		return &core.ModelReply{Content: fmt.Sprintf("%s (for %v)", body, ctx.Value(userKey{}))}, nil
	})

	rt, _ := core.New(core.Config{Model: model})
	defer rt.Close()
	ctx := context.WithValue(context.Background(), userKey{}, "ada")
	run, _ := rt.StartRun(ctx, "s", "hello")
	res, err := run.Wait(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Reply.Content)
	// Output: upstream says hi (for ada)
}

// A model whose request outlives the run's timeout sees its context done
// (the run does not wait for a model that does not implement
// ContextHonouring), and StopCause says why.
func ExampleStopCause() {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)

	seen := make(chan string, 1)
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		hreq, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := http.DefaultClient.Do(hreq)
		if err != nil {
			seen <- fmt.Sprint("request: ", ctx.Err() != nil, " ", core.StopCause(ctx).Code)
			return nil, err
		}
		resp.Body.Close()
		return &core.ModelReply{Content: "late"}, nil
	})
	rt, _ := core.New(core.Config{Model: model})
	defer rt.Close()
	run, _ := rt.StartRunWithPolicy(context.Background(), "s", "hello", core.Policy{TimeoutMs: 50})
	_, err := run.Wait(context.Background())
	fmt.Println("run:", core.ErrorCode(err))
	fmt.Println(<-seen)
	// Output:
	// run: timeout
	// request: true timeout
}
