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
// must answer 400 and leave no session behind.
func (c *Case) RunHTTP(t testing.TB, send Send, sessionID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"input": "next", "history": c.History})
	status, b, err := send("POST", "/v1/sessions/"+sessionID+"/runs", string(body))
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 {
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
		if status != 400 {
			t.Errorf("status %d for %s, want 400", status, show(r))
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
	status, b, err = send("GET", "/v1/sessions/"+sessionID, "")
	if err != nil || status != 200 {
		t.Fatalf("GET session: status %d, %v, body %s", status, err, b)
	}
	var s struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("session %s: %v", b, err)
	}
	if len(s.Messages) < 2 {
		t.Fatalf("session holds %d messages, fewer than the new turn", len(s.Messages))
	}
	held := s.Messages[:len(s.Messages)-2]
	if res.Seed.Seeded != len(held) {
		t.Errorf("seed.seeded %d, session holds %d seeded messages", res.Seed.Seeded, len(held))
	}
	got := make([]map[string]any, len(held))
	for i, m := range held {
		got[i] = CanonicalMap(m)
	}
	c.Check(t, got, res.Seed.SkippedSystem, nil)
}
