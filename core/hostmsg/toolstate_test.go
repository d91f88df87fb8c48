package hostmsg_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Ensure a UIMessage tool part in any state without an output is read as
// a call without a result, with the text after it in a message of its
// own, which core refuses at the UIMessage's index and repairs with the
// interrupted marker between the call and that text.
func TestMessages_ToolPartWithoutOutput(t *testing.T) {
	for _, state := range []string{"input-streaming", "input-available", "approval-requested", "approval-responded", "output-denied", "some-future-state"} {
		t.Run(state, func(t *testing.T) {
			v, err := hostjson.Parse([]byte(`[{"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]},
				{"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "Calling."},
					{"type": "tool-f", "toolCallId": "c1", "state": "` + state + `", "input": {"x": 1}},
					{"type": "text", "text": "Waiting."}]}]`))
			if err != nil {
				t.Fatal(err)
			}
			h, err := hostmsg.Messages(v, 0)
			if err != nil {
				t.Fatalf("refused while reading: %v", err)
			}
			want := []core.SeedMessage{
				{ID: "u", Role: core.RoleUser, Content: "go"},
				{ID: "a", Role: core.RoleAssistant, Content: "Calling.", ToolCalls: []core.ToolCall{{ID: "c1", Name: "f", Arguments: `{"x":1}`}}},
				{ID: "a", Role: core.RoleAssistant, Content: "Waiting.", Continues: true},
			}
			if !reflect.DeepEqual(h, want) {
				t.Fatalf("read\n got %+v\nwant %+v", h, want)
			}
			err = core.ValidateHistory(h, core.Limits{})
			if e := core.AsError(err); err == nil || e.Code != core.CodeInvalidHistory || e.Index != 1 {
				t.Fatalf("validation: %v, want invalid_history at index 1", err)
			}
			check := core.CheckHistory(h, core.Limits{})
			if len(check.Problems) != 1 || check.Problems[0].Repair != core.RepairMissingToolResult || check.Problems[0].Index != 1 {
				t.Fatalf("check = %+v, want one missing_tool_result at 1", check)
			}
		})
	}
}
