//go:build !js

package workerd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// Ensure policy.maxContextTokens on the Worker: the model is sent what
// fits the budget by the estimate, result.context and the model.context
// event say so, and an input over the budget is refused limit_exceeded
// before the model, changing nothing.
func TestWorker_MaxContextTokens(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{})
	var history []msg
	for i := range 30 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		history = append(history, msg{role, fmt.Sprintf("m%d", i), ""})
	}
	body, _ := json.Marshal(turnBody{Input: "hi", History: history, Policy: map[string]any{"maxContextTokens": 60, "contextChunkTokens": 30}})

	req, _ := http.NewRequest("POST", p.URL+"/v1/sessions/tokens/runs", strings.NewReader(string(body)))
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var names []string
	var ctx, last map[string]any
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = nil
			if err := json.Unmarshal([]byte(d), &last); err != nil {
				t.Fatalf("data %q: %v", d, err)
			}
			if last["type"] == "model.context" {
				ctx, _ = last["context"].(map[string]any)
			}
		}
	}
	// 31 messages of 5 tokens by the estimate (2 or 3 bytes are 1, plus
	// 4) under 60 moving by 30: 155 tokens are 95 over, rounded up to a
	// chunk 120, so the first 24 are dropped and 7 sent, 35 tokens.
	want := map[string]any{"messages": float64(7), "tokens": float64(35), "dropped": float64(24)}
	if fmt.Sprint(ctx) != fmt.Sprint(want) {
		t.Errorf("model.context: got %v, want %v (events %v)", ctx, want, names)
	}
	result, _ := last["result"].(map[string]any)
	if names[len(names)-1] != "run.completed" || fmt.Sprint(result["context"]) != fmt.Sprint(want) {
		t.Errorf("run.completed: got %v", last)
	}
	if reply, _ := result["reply"].(map[string]any); reply["content"] != "echo: hi (model received 7 messages)" {
		t.Errorf("reply: got %v", result["reply"])
	}

	big := strings.Repeat("x", 400)
	r := post(t, p, "/v1/sessions/tokens-big/runs", turnBody{Input: big, History: history, Policy: map[string]any{"maxContextTokens": 60}})
	if r.Status != 413 || r.Error.Code != "limit_exceeded" || !strings.Contains(r.Error.Message, "policy.maxContextTokens (60)") {
		t.Errorf("too large: got %d %+v", r.Status, r.Error)
	}
	if r = doReq(t, p, "GET", "/v1/sessions/tokens-big", nil); r.Status != 404 {
		t.Errorf("session after the refusal: got %d", r.Status)
	}
}
