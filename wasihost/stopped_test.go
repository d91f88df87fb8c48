package wasihost

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure, on both modules, a model call that returns once its run was
// cancelled ends the run cancelled, whatever it returned (its context's
// error, an error of its own, a reply), as in core. Before, its answer
// reached the module when it won the race with the context, and the run
// failed model_error. Which the host sees first is up to the scheduler,
// and the answer rarely wins: each case runs 300 times.
func TestRun_ModelReturnsAfterCancel(t *testing.T) {
	cases := []struct {
		name   string
		answer func(ctx context.Context) (*core.ModelReply, error)
	}{
		{"context's error", func(ctx context.Context) (*core.ModelReply, error) { return nil, ctx.Err() }},
		{"own error", func(context.Context) (*core.ModelReply, error) { return nil, errors.New("upstream gone") }},
		{"reply", func(context.Context) (*core.ModelReply, error) { return &core.ModelReply{Content: "late"}, nil }},
	}
	for _, mod := range modules {
		for _, tc := range cases {
			t.Run(mod.name+"/"+tc.name, func(t *testing.T) {
				rt := mustRuntime(t, mod.start(t), Config{Model: core.ModelFunc(func(ctx core.Context, _ *core.ModelRequest) (*core.ModelReply, error) {
					<-ctx.Done()
					return tc.answer(ctx)
				})})
				for i := range 300 {
					ctx, cancel := context.WithCancel(context.Background())
					// The run is cancelled before its model call: the
					// model's answer and the context's end are both there
					// when the host looks.
					_, err := rt.Run(ctx, core.RunRequest{SessionID: "s" + strconv.Itoa(i), Input: "q", OnEvent: func(ev core.Event) {
						if ev.Type == core.EventRunStarted {
							cancel()
						}
					}})
					cancel()
					if core.ErrorCode(err) != core.CodeCancelled {
						t.Fatalf("run %d: %v, want cancelled", i, err)
					}
				}
			})
		}
	}
}
