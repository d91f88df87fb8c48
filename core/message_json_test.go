package core_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
)

func TestMessage_JSON_WireShape(t *testing.T) {
	tests := []struct {
		name string
		msg  core.Message
		want string
	}{
		// Ensure a plain message has role and content only.
		{name: "OK user", msg: core.Message{Role: core.RoleUser, Content: "hi"}, want: `{"role":"user","content":"hi"}`},
		// Ensure an empty content is still written (every edge writes it).
		{name: "OK empty content", msg: core.Message{Role: core.RoleAssistant}, want: `{"role":"assistant","content":""}`},
		// Ensure tool calls use the snake_case wire names.
		{
			name: "OK tool calls",
			msg:  core.Message{ID: "m1", Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "add", Arguments: `{"a":1}`}}},
			want: `{"id":"m1","role":"assistant","content":"","tool_calls":[{"id":"c1","name":"add","arguments":"{\"a\":1}"}]}`,
		},
		// Ensure a tool result carries tool_call_id.
		{name: "OK tool", msg: core.Message{Role: core.RoleTool, Content: "2", ToolCallID: "c1"}, want: `{"role":"tool","content":"2","tool_call_id":"c1"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("got %s, want %s", b, tc.want)
			}
			var back core.Message
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.msg) {
				t.Fatalf("round trip: got %+v, want %+v", back, tc.msg)
			}
		})
	}
}

func TestSeedMessages(t *testing.T) {
	// Ensure no messages give no history.
	if got := core.SeedMessages(nil); got != nil {
		t.Fatalf("SeedMessages(nil): got %v, want nil", got)
	}
	// Ensure every field carries over and the seed messages validate.
	msgs := []core.Message{
		{ID: "u1", Role: core.RoleUser, Content: "add"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "add", Arguments: "{}"}}},
		{Role: core.RoleTool, Content: "3", ToolCallID: "c1"},
	}
	got := core.SeedMessages(msgs)
	if len(got) != len(msgs) {
		t.Fatalf("got %d messages, want %d", len(got), len(msgs))
	}
	for i := range msgs {
		if m := got[i].Message(); !reflect.DeepEqual(m, msgs[i]) {
			t.Fatalf("message %d: got %+v, want %+v", i, m, msgs[i])
		}
	}
	// Ensure the JSON of a SeedMessage is the Message's.
	a, _ := json.Marshal(msgs)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Fatalf("SeedMessage JSON: got %s, want %s", b, a)
	}
}
