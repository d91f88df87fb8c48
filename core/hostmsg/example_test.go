package hostmsg_test

import (
	"fmt"

	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// A history mixing OpenAI's shape and a Vercel AI SDK UIMessage, read
// into the messages a session will hold: the UIMessage's tool part is a
// call and its result, and the text after it a message of its own.
func ExampleMessages() {
	v, _ := hostjson.Parse([]byte(`[
		{"role": "developer", "content": "Be brief."},
		{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
		{"id": "m2", "role": "assistant", "parts": [
			{"type": "tool-weather", "toolCallId": "c1", "state": "output-available",
			 "input": {"city": "Paris"}, "output": {"temp": 21}},
			{"type": "text", "text": "21 degrees."}]}
	]`))
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		panic(err)
	}
	for _, m := range h {
		fmt.Printf("%s %q calls=%v result-of=%q continues=%v\n", m.Role, m.Content, m.ToolCalls, m.ToolCallID, m.Continues)
	}
	// Output:
	// system "Be brief." calls=[] result-of="" continues=false
	// user "Weather in Paris?" calls=[] result-of="" continues=false
	// assistant "" calls=[{c1 weather {"city":"Paris"}}] result-of="" continues=false
	// tool "{\"temp\":21}" calls=[] result-of="c1" continues=true
	// assistant "21 degrees." calls=[] result-of="" continues=true
}

func ExampleMessages_refusal() {
	v, _ := hostjson.Parse([]byte(`[{"role": "user", "content": "hi"}, {"role": "assistant", "content": null,
		"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": [1]}}]}]`))
	_, err := hostmsg.Messages(v, 0)
	fmt.Println(err)
	// Output: invalid_history: tool_calls[0].function.arguments must be JSON text or an object (index 1)
}
