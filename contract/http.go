package contract

import (
	"encoding/json"
	"testing"
)

// Send makes one request to an edge that serves the HTTP API (docs/worker.md)
// and returns the status and body. body is JSON text, or "" for none.
type Send func(method, path, body string) (status int, respBody []byte, err error)

// RunHTTP runs c against an HTTP API edge: it seeds session sessionID
// (which must not exist yet) with c's history and the input "next", then
// reads the session back, and checks the outcome with c.Check. A refusal
// must answer 400 (413 for limit_exceeded) and leave no session behind. It then checks the
// history with POST /v1/history/check (c.CheckProblems) and, when the
// case says what repair does, seeds session sessionID+"-repaired" with
// policy.repair and inspect (c.CheckRepaired).
func (c *Case) RunHTTP(t testing.TB, send Send, sessionID string) {
	t.Helper()
	c.runHTTP(t, send, sessionID)
	c.checkHTTP(t, send)
	if c.Repaired != nil {
		c.repairHTTP(t, send, sessionID+"-repaired")
	}
}

// errorBody reads an HTTP API error body.
func errorBody(t testing.TB, status int, b []byte) *Refusal {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Index   *int   `json:"index"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
		t.Fatalf("status %d, body %s: not an error body", status, b)
	}
	r := &Refusal{Code: e.Error.Code, Message: e.Error.Message, Index: -1}
	if e.Error.Index != nil {
		r.Index = *e.Error.Index
	}
	return r
}

// checkHTTP checks c's history with POST /v1/history/check.
func (c *Case) checkHTTP(t testing.TB, send Send) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"history": c.History})
	status, b, err := send("POST", "/v1/history/check", string(body))
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 {
		t.Fatalf("check: status %d, body %s", status, b)
	}
	var res struct {
		OK       *bool     `json:"ok"`
		Problems []Problem `json:"problems"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.OK == nil || res.Problems == nil {
		t.Fatalf("check: body %s is not {ok, problems}", b)
	}
	c.CheckProblems(t, *res.OK, res.Problems)
}

// repairHTTP seeds session sessionID with c's history and policy.repair.
func (c *Case) repairHTTP(t testing.TB, send Send, sessionID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"input": "next", "history": c.History, "policy": map[string]any{"repair": true}, "inspect": true})
	status, b, err := send("POST", "/v1/sessions/"+sessionID+"/runs", string(body))
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 {
		c.CheckRepaired(t, nil, nil, nil, errorBody(t, status, b))
		return
	}
	var res struct {
		Seed struct {
			Repairs  []RepairRecord  `json:"repairs"`
			Repaired json.RawMessage `json:"repaired"`
		} `json:"seed"`
		ModelCalls []struct {
			Messages []map[string]any `json:"messages"`
		} `json:"modelCalls"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.ModelCalls) == 0 {
		t.Fatalf("result %s: %v", b, err)
	}
	msgs := getSession(t, send, "/v1/sessions/"+sessionID)
	if len(msgs) == 0 {
		t.Fatal("the repaired session holds no message")
	}
	c.CheckRepaired(t, canonicalAll(res.ModelCalls[0].Messages), canonicalAll(msgs[:len(msgs)-1]), res.Seed.Repairs, nil)
	c.CheckHealed(t, res.Seed.Repaired)
}

// getSession returns the messages of the session at path, read with a
// GET, failing t unless the API answers 200 with a session.
func getSession(t testing.TB, send Send, path string) []map[string]any {
	t.Helper()
	status, b, err := send("GET", path, "")
	if err != nil || status != 200 {
		t.Fatalf("GET session: status %d, %v, body %s", status, err, b)
	}
	var s struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("session %s: %v", b, err)
	}
	return s.Messages
}

func canonicalAll(ms []map[string]any) []map[string]any {
	out := make([]map[string]any, len(ms))
	for i, m := range ms {
		out[i] = CanonicalMap(m)
	}
	return out
}

// runHTTP is the seed without repair of RunHTTP.
func (c *Case) runHTTP(t testing.TB, send Send, sessionID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"input": "next", "history": c.History})
	status, b, err := send("POST", "/v1/sessions/"+sessionID+"/runs", string(body))
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 {
		r := errorBody(t, status, b)
		want := 400
		if r.Code == "limit_exceeded" {
			want = 413
		}
		if status != want {
			t.Errorf("status %d for %s, want %d", status, show(r), want)
		}
		if s, _, _ := send("GET", "/v1/sessions/"+sessionID, ""); s != 404 {
			t.Errorf("a refused history left a session behind (GET answered %d)", s)
		}
		c.Check(t, nil, 0, r)
		return
	}
	var res struct {
		Seed struct {
			Seeded        int `json:"seeded"`
			SkippedSystem int `json:"skippedSystem"`
		} `json:"seed"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("result %s: %v", b, err)
	}
	msgs := getSession(t, send, "/v1/sessions/"+sessionID)
	if len(msgs) < 2 {
		t.Fatalf("session holds %d messages, fewer than the new turn", len(msgs))
	}
	held := msgs[:len(msgs)-2]
	if res.Seed.Seeded != len(held) {
		t.Errorf("seed.seeded %d, session holds %d seeded messages", res.Seed.Seeded, len(held))
	}
	c.Check(t, canonicalAll(held), res.Seed.SkippedSystem, nil)
}
