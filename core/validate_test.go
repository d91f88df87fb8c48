package core_test

import (
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// manyCalls returns the ids c0 ... c(n-1).
func manyCalls(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "c" + strconv.Itoa(i)
	}
	return ids
}

// answers returns a tool result for each id, in reverse order.
func answers(ids []string) []core.SeedMessage {
	out := make([]core.SeedMessage, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		out = append(out, toolResult(ids[i], "r"))
	}
	return out
}

func TestValidateHistory_ManyCalls(t *testing.T) {
	// The blocks here have more calls than checkHistory scans: it looks
	// them up by id. The outcomes are those of small blocks.
	ids := manyCalls(40)
	block := func(extra ...core.SeedMessage) []core.SeedMessage {
		h := append([]core.SeedMessage{user("a"), calling(ids...)}, answers(ids)...)
		return append(h, extra...)
	}
	tests := []struct {
		name    string
		history []core.SeedMessage
		index   int
		message string
	}{
		// Ensure a block answered in any order is accepted, and a later
		// user turn after it too.
		{name: "OK", history: block(user("b")), index: -1},
		// Ensure an id used twice is refused at the assistant message.
		{name: "ErrDuplicateCallID", history: []core.SeedMessage{user("a"), calling(append(manyCalls(40), "c5")...)},
			index: 1, message: `tool call id "c5" is used twice`},
		// Ensure a second answer is refused, before and after a user turn.
		{name: "ErrAnsweredTwice", history: block(toolResult("c7", "r")), index: 42, message: `tool call "c7" is answered twice`},
		{name: "ErrAnsweredAfterUser", history: block(user("b"), toolResult("c39", "r")), index: 43, message: `tool call "c39" is answered twice`},
		// Ensure a result for an id not in the block is an orphan.
		{name: "ErrOrphan", history: block(toolResult("c40", "r")), index: 42,
			message: `tool result "c40" answers no call of the preceding assistant message`},
		// Ensure an unanswered call is refused at its assistant message.
		{name: "ErrUnanswered", history: append(append([]core.SeedMessage{user("a"), calling(ids...)}, answers(append(manyCalls(20), ids[21:]...))...), user("b")),
			index: 1, message: `tool call "c20" has no tool result before the next user or assistant message`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := core.ValidateHistory(tc.history, core.Limits{})
			if tc.index < 0 {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			e, ok := err.(*core.Error)
			if !ok || e.Code != core.CodeInvalidHistory || e.Index != tc.index || e.Message != tc.message {
				t.Fatalf("got %v, want invalid_history at %d: %s", err, tc.index, tc.message)
			}
		})
	}
}

// BenchmarkValidateHistory_Calls validates one assistant message of 1,000
// and of 32,000 tool calls, each answered, and reports the cost per call:
// about the same for both when validation is linear in the calls.
func BenchmarkValidateHistory_Calls(b *testing.B) {
	for _, n := range []int{1000, 32000} {
		ids := manyCalls(n)
		h := append([]core.SeedMessage{user("a"), calling(ids...)}, answers(ids)...)
		h = append(h, user("b"))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := core.ValidateHistory(h, core.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/call")
		})
	}
}
