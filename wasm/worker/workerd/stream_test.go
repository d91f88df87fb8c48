//go:build !js

package workerd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// Ensure the Worker's OpenAI model asks the upstream for a streamed
// answer (stream: true) and hands its deltas on as they come, in both
// deployments: a streamed run's client gets the upstream's first delta
// as a model.delta event while the upstream still holds the rest (it
// sends the rest only once the client has seen the first), then a
// model.delta for each later one, and the Result holds the whole reply.
func TestWorker_OpenAI_StreamsDeltas(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	words := []string{"Hello", " from", " a", " streamed", " upstream"}
	var asked atomic.Bool    // the request had stream: true
	var restSent atomic.Bool // the upstream sent the deltas after the first
	seen := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		asked.Store(body.Stream)
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q}}]}`, strings.Join(words, ""))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(d string) {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", d)
			w.(http.Flusher).Flush()
		}
		send(words[0])
		select {
		case <-seen: // the client saw the first delta
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			return
		}
		restSent.Store(true)
		for _, d := range words[1:] {
			send(d)
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	for _, durable := range []bool{false, true} {
		t.Run(map[bool]string{false: "isolate", true: "durable"}[durable], func(t *testing.T) {
			restSent.Store(false)
			env := openaiEnv(up.URL)
			if durable {
				env = durableEnv(env)
			}
			p := mustStart(t, workerd.Options{Durable: durable, AllowLocalNetwork: true, Env: env})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/s/runs", strings.NewReader(`{"input":"hi"}`))
			req.Header.Set("Accept", "text/event-stream")
			res, err := client.Do(req)
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("run: %v %v", res, err)
			}
			defer res.Body.Close()
			var deltas []string
			var early bool // the first delta came before the upstream sent the rest
			var final sse
			sc := bufio.NewScanner(res.Body)
			var ev sse
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "event: ") {
					ev.typ = line[7:]
				} else if strings.HasPrefix(line, "data: ") {
					ev.data = line[6:]
				} else if line == "" && ev.typ != "" {
					if ev.typ == "model.delta" {
						var d struct{ Delta string }
						_ = json.Unmarshal([]byte(ev.data), &d)
						deltas = append(deltas, d.Delta)
						if len(deltas) == 1 {
							early = !restSent.Load()
							select {
							case seen <- struct{}{}:
							default: // an upstream that did not stream does not wait
							}
						}
					}
					if strings.HasPrefix(ev.typ, "run.") && ev.typ != "run.started" {
						final = ev
						break
					}
					ev = sse{}
				}
			}
			if !asked.Load() {
				t.Error("the upstream was not asked to stream (stream: true)")
			}
			if len(deltas) < 2 || !early || strings.Join(deltas, "") != strings.Join(words, "") {
				t.Fatalf("model.delta events %q (the first before the rest was sent: %v), want the upstream's %d deltas as they came", deltas, early, len(words))
			}
			if final.typ != "run.completed" || !strings.Contains(final.data, `"content":"Hello from a streamed upstream"`) {
				t.Fatalf("final event %s %.300s", final.typ, final.data)
			}
		})
	}
}
