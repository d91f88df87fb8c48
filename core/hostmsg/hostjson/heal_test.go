package hostjson_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Ensure AppendHealed renders each edit in the history's shape, keeps the
// other messages' JSON text as it was (fields in their order), and
// ignores edits whose indexes are outside the history instead of failing.
func TestAppendHealed(t *testing.T) {
	marker := func(id, owner string) core.SeedMessage {
		return core.SeedMessage{ID: owner, Role: core.RoleTool, Content: core.InterruptedToolResult, ToolCallID: id}
	}
	cases := []struct {
		name, history string
		edits         []core.HistoryEdit
		want          string
	}{
		{"a drop and a camelCase marker with an id",
			`[{"z":1,"role":"user","content":"q"},{"id":"a1","role":"assistant","content":"","toolCalls":[{"id":"c1","name":"f","arguments":"{}"}]},{"role":"user","content":"q"}]`,
			[]core.HistoryEdit{{Op: core.EditDrop, Index: 2}, {Op: core.EditInsert, Index: 2, Call: 1, Message: marker("c1", "a1")}},
			`[{"z":1,"role":"user","content":"q"},{"id":"a1","role":"assistant","content":"","toolCalls":[{"id":"c1","name":"f","arguments":"{}"}]},{"id":"a1","role":"tool","toolCallId":"c1","content":"Tool call interrupted: no result was recorded."}]`},
		{"a UIMessage tool part gets the marker as its result, other fields kept",
			`[{"id":"m1","role":"assistant","parts":[{"type":"tool-f","toolCallId":"c1","state":"approval-requested","input":{},"approval":{"id":"x"}},{"type":"text","text":"t"}],"metadata":{"k":1}}]`,
			[]core.HistoryEdit{{Op: core.EditInsert, Index: 1, Call: 0, Message: marker("c1", "m1")}},
			`[{"id":"m1","role":"assistant","parts":[{"type":"tool-f","toolCallId":"c1","state":"output-error","input":{},"approval":{"id":"x"},"errorText":"Tool call interrupted: no result was recorded."},{"type":"text","text":"t"}],"metadata":{"k":1}}]`},
		{"edits outside the history are ignored",
			`[{"role":"user","content":"q"}]`,
			[]core.HistoryEdit{{Op: core.EditDrop, Index: 7}, {Op: core.EditInsert, Index: 9, Call: -3, Message: marker("c1", "")}, {Op: "bogus", Index: 0}},
			`[{"role":"user","content":"q"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := hostjson.Parse([]byte(tc.history))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(hostjson.AppendHealed(nil, v, tc.edits)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
