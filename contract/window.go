package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// WindowCase is one case of the token window's corpus in
// testdata/contract/window/: turns run in order on one fresh session
// under a policy with policy.maxContextTokens, counted with the estimate
// (core.EstimateTokens) and answered by the echo model, and the context
// each turn's last model call must report. Every Go edge (core, httpapi,
// wasihost) runs the same cases through RunWindow; see
// testdata/contract/window/README.md.
type WindowCase struct {
	// Name is "file/name", unique in the window corpus.
	Name string
	// SystemPrompt is the runtime's system prompt ("" for none).
	SystemPrompt string
	// Policy is the policy of every turn, as JSON.
	Policy json.RawMessage
	// History is the host's history of the first turn, as JSON in the
	// module's own shape; later turns send none (the session is warm).
	History json.RawMessage
	// Turns are the turns run in order.
	Turns []WindowTurn
	// FirstChanges, when not nil, is how many times the first message
	// sent (the context's Dropped) changes from one turn to the next.
	FirstChanges *int
}

// WindowTurn is one turn of a WindowCase: its input and what it must
// report, the context or a refusal (code and message; nothing changes).
type WindowTurn struct {
	Input   string
	Context *WindowContext
	Error   *Refusal
}

// WindowContext is result.context: what the last model call was sent.
type WindowContext struct {
	Messages int   `json:"messages"`
	Tokens   int64 `json:"tokens"`
	Dropped  int   `json:"dropped"`
}

// WindowOutcome is what an edge's turn gave: its result's context, the
// number of messages the echo model said it received, the session's
// message count afterwards; or the refusal.
type WindowOutcome struct {
	Context      *WindowContext
	Received     int
	MessageCount int
	Err          *Refusal
}

// WindowEdge runs one turn on an edge: on session, with input, the
// history (nil for a warm turn) and the policy as JSON. Messages returns
// the session's message count, or -1 when there is no session.
type WindowEdge struct {
	Turn     func(t testing.TB, session, input string, history, policy json.RawMessage) WindowOutcome
	Messages func(t testing.TB, session string) int
}

type rawWindowCase struct {
	Name         string          `json:"name"`
	SystemPrompt string          `json:"systemPrompt"`
	Policy       json.RawMessage `json:"policy"`
	History      json.RawMessage `json:"history"`
	Turns        []struct {
		Input   string         `json:"input"`
		Context *WindowContext `json:"context"`
		Error   *Refusal       `json:"error"`
	} `json:"turns"`
	Repeat *struct {
		Turns      int `json:"turns"`
		InputBytes int `json:"inputBytes"`
	} `json:"repeat"`
	FirstChanges *int `json:"firstChanges"`
}

// WindowDir returns the window corpus's directory,
// testdata/contract/window/ at the repository's root.
func WindowDir() string { return filepath.Join(Dir(), "window") }

// MustLoadWindow reads every *.json file of the window corpus, in name
// order, failing t when it cannot or finds no case. A case's "repeat"
// ({"turns": N, "inputBytes": B}) adds N turns whose input is B bytes
// of "w", each checked for the budget alone.
func MustLoadWindow(t testing.TB) []WindowCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(WindowDir(), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []WindowCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var raw []rawWindowCase
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		for _, r := range raw {
			c := WindowCase{Name: base + "/" + r.Name, SystemPrompt: r.SystemPrompt, Policy: r.Policy,
				History: r.History, FirstChanges: r.FirstChanges}
			for _, tu := range r.Turns {
				c.Turns = append(c.Turns, WindowTurn{Input: tu.Input, Context: tu.Context, Error: tu.Error})
			}
			if r.Repeat != nil {
				in := strings.Repeat("w", r.Repeat.InputBytes)
				for range r.Repeat.Turns {
					c.Turns = append(c.Turns, WindowTurn{Input: in})
				}
			}
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatal("the window corpus is empty")
	}
	return out
}

// GoPolicy returns the case's policy as a core.Policy.
func (c *WindowCase) GoPolicy(t testing.TB) core.Policy {
	t.Helper()
	var p struct {
		MaxContextTokens   int64 `json:"maxContextTokens"`
		ContextChunkTokens int64 `json:"contextChunkTokens"`
		MaxContextMessages int   `json:"maxContextMessages"`
		MaxContextBytes    int64 `json:"maxContextBytes"`
	}
	if !strictDecode(c.Policy, &p) {
		t.Fatalf("policy %s: not a window policy", c.Policy)
	}
	return core.Policy{MaxContextTokens: p.MaxContextTokens, ContextChunkTokens: p.ContextChunkTokens,
		MaxContextMessages: p.MaxContextMessages, MaxContextBytes: p.MaxContextBytes}
}

// RunWindow runs the case's turns on e, on a session of its own, and
// fails t unless each turn reports what the case says: the context, its
// tokens within the budget, the echo model sent exactly its messages,
// the messages sent and dropped making the session before the reply; a
// refusal with its code and message, leaving the session as it was.
func (c *WindowCase) RunWindow(t testing.TB, e WindowEdge, session string) {
	t.Helper()
	budget := c.GoPolicy(t).MaxContextTokens
	history := c.History
	changes, last := 0, -1
	for i, turn := range c.Turns {
		before := e.Messages(t, session)
		o := e.Turn(t, session, turn.Input, history, c.Policy)
		if turn.Error != nil {
			if o.Err == nil || o.Err.Code != turn.Error.Code || o.Err.Message != turn.Error.Message {
				t.Fatalf("turn %d: got %s, want the refusal %s", i, show(o.Err), show(turn.Error))
			}
			if after := e.Messages(t, session); after != before {
				t.Fatalf("turn %d: the refusal changed the session from %d messages to %d", i, before, after)
			}
			continue
		}
		if o.Err != nil {
			t.Fatalf("turn %d: refused with %s", i, show(o.Err))
		}
		history = nil
		got := o.Context
		if got == nil {
			t.Fatalf("turn %d: no context", i)
		}
		if turn.Context != nil && *got != *turn.Context {
			t.Fatalf("turn %d: context %s, want %s", i, show(got), show(turn.Context))
		}
		if got.Tokens > budget {
			t.Fatalf("turn %d: %d tokens sent, over the budget %d", i, got.Tokens, budget)
		}
		if o.Received != got.Messages {
			t.Fatalf("turn %d: the model received %d messages, the context says %d", i, o.Received, got.Messages)
		}
		if got.Messages+got.Dropped != o.MessageCount-1 {
			t.Fatalf("turn %d: %d sent and %d dropped, the session held %d before the reply", i, got.Messages, got.Dropped, o.MessageCount-1)
		}
		if last >= 0 && got.Dropped != last {
			changes++
		}
		last = got.Dropped
	}
	if c.FirstChanges != nil && changes != *c.FirstChanges {
		t.Fatalf("the first message sent changed %d times, want %d", changes, *c.FirstChanges)
	}
}

// Received reads the count of messages the echo model says it received
// from its reply ("... (model received N messages)"), or -1.
func Received(reply string) int {
	i := strings.LastIndex(reply, "(model received ")
	if i < 0 {
		return -1
	}
	n := 0
	for _, ch := range reply[i+len("(model received "):] {
		if ch < '0' || ch > '9' {
			break
		}
		n = n*10 + int(ch-'0')
	}
	return n
}

// GoWindowEdge is the WindowEdge of a Go edge that takes a
// core.RunRequest (core, wasihost): each turn is a request under policy,
// with the turn's history read as a Go host reads host messages
// (hostjson, then hostmsg.Messages), run by run; the outcome is the
// result's context and reply, or the refusal of its error. messages is
// the edge's WindowEdge.Messages.
func GoWindowEdge(policy core.Policy, run func(req core.RunRequest) (*core.Result, error), messages func(t testing.TB, session string) int) WindowEdge {
	return WindowEdge{
		Turn: func(t testing.TB, session, input string, history, _ json.RawMessage) WindowOutcome {
			req := core.RunRequest{SessionID: session, Input: input, Policy: policy}
			if history != nil {
				v, err := hostjson.Parse(history)
				if err != nil {
					t.Fatal(err)
				}
				if req.History, err = hostmsg.Messages(v, 0); err != nil {
					t.Fatal(err)
				}
				req.WithHistory = true
			}
			res, err := run(req)
			if err != nil {
				return WindowOutcome{Err: RefusalOf(err)}
			}
			o := WindowOutcome{Received: Received(res.Reply.Content), MessageCount: res.MessageCount}
			if res.Context != nil {
				o.Context = &WindowContext{Messages: res.Context.Messages, Tokens: res.Context.Tokens, Dropped: res.Context.Dropped}
			}
			return o
		},
		Messages: messages,
	}
}
