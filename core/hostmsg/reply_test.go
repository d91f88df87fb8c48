package hostmsg_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

func TestReply(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  *core.ModelReply
		err   string
	}{
		{name: "OKString", reply: `"hi"`, want: &core.ModelReply{Content: "hi"}},
		{name: "OKObject", reply: `{"content": "hi"}`, want: &core.ModelReply{Content: "hi"}},
		{name: "OKNullContent", reply: `{"content": null, "toolCalls": [{"id": "c", "name": "f"}]}`,
			want: &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}}},
		{name: "OKContentParts", reply: `{"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}`,
			want: &core.ModelReply{Content: "ab"}},
		// Ensure the arguments rule is the histories' one, and OpenAI's
		// function shape is read.
		{name: "OKOpenAICall", reply: `{"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}`,
			want: &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "c", Name: "f", Arguments: `{"x":1}`}}}},
		// Ensure snake_case wins, as in histories.
		{name: "OKSnakeWins", reply: `{"content": "", "tool_calls": [{"id": "a", "name": "f", "arguments": "1"}], "toolCalls": [{"id": "b", "name": "g"}]}`,
			want: &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "a", Name: "f", Arguments: "1"}}}},
		{name: "ErrNumber", reply: `5`, err: "the model must answer an object { content, toolCalls? } or a string"},
		{name: "ErrArray", reply: `["hi"]`, err: "the model must answer an object { content, toolCalls? } or a string"},
		{name: "ErrContent", reply: `{"content": 1}`, err: "reply.content must be a string, an array of parts, or null"},
		{name: "ErrPart", reply: `{"content": [{"type": "video"}]}`, err: `reply.content[0]: unknown part type "video"`},
		{name: "ErrCalls", reply: `{"toolCalls": {}}`, err: "reply.tool_calls must be an array"},
		{name: "ErrArguments", reply: `{"toolCalls": [{"id": "c", "name": "f", "arguments": [1]}]}`, err: "reply.tool_calls[0].arguments must be JSON text or an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := hostjson.Parse([]byte(tt.reply))
			if err != nil {
				t.Fatal(err)
			}
			got, err := hostmsg.Reply(v)
			if tt.err != "" {
				e, ok := err.(*core.Error)
				if !ok || e.Code != core.CodeModelError || e.Message != tt.err || e.Index != core.NoIndex {
					t.Fatalf("got %v, want model_error %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMessages_NotAnArray(t *testing.T) {
	// Ensure a history that is not an array is an invalid_argument, and
	// an array over the limit is refused before it is read.
	v, _ := hostjson.Parse([]byte(`{"role": "user"}`))
	if _, err := hostmsg.Messages(v, 0); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Errorf("object history: %v, want invalid_argument", err)
	}
	v, _ = hostjson.Parse([]byte(`[1, 2, 3]`))
	_, err := hostmsg.Messages(v, 2)
	if e, ok := err.(*core.Error); !ok || e.Code != core.CodeLimitExceeded || e.Index != 2 {
		t.Errorf("3 messages over a limit of 2: %v, want limit_exceeded at index 2", err)
	}
}

func TestQuote_CutsAtACharacter(t *testing.T) {
	// Ensure a long part type is cut to 64 bytes at a character boundary,
	// as js/history.js cuts it.
	long := ""
	for i := 0; i < 30; i++ {
		long += "é" // 2 bytes
	}
	long = "x" + long + long
	v, _ := hostjson.Parse([]byte(`[{"role": "user", "content": [{"type": "` + long + `"}]}]`))
	_, err := hostmsg.Messages(v, 0)
	want := `content[0]: unknown part type "x` + long[1:63] + `..."`
	if e, ok := err.(*core.Error); !ok || e.Message != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// sparse is a host value whose Array claims a length it does not hold,
// as a JavaScript array made with new Array(n): every element is
// undefined.
type sparse struct {
	kind   hostmsg.Kind
	n      int
	fields map[string]sparse
}

func (s sparse) Kind() hostmsg.Kind    { return s.kind }
func (s sparse) Text() string          { return "" }
func (s sparse) Len() int              { return s.n }
func (s sparse) Index(int) sparse      { return sparse{} }
func (s sparse) Get(key string) sparse { return s.fields[key] }
func (s sparse) JSON() (string, bool)  { return "", false }
func (s sparse) Keys() []string        { return nil }
func (s sparse) Number() float64       { return 0 }
func (s sparse) Bool() bool            { return false }

func TestToolCalls_SparseArray(t *testing.T) {
	// Ensure tool_calls claiming a huge length are refused at their first
	// element, without allocating for the claimed length first.
	calls := sparse{kind: hostmsg.Array, n: 1 << 40}
	msg := sparse{kind: hostmsg.Object, fields: map[string]sparse{
		"role":       {kind: hostmsg.String},
		"content":    {kind: hostmsg.Null},
		"tool_calls": calls,
	}}
	if _, got := hostmsg.Append(nil, msg); got != "tool_calls[0] must be an object" {
		t.Errorf("Append: got %q, want %q", got, "tool_calls[0] must be an object")
	}
	_, err := hostmsg.Reply(sparse{kind: hostmsg.Object, fields: map[string]sparse{"tool_calls": calls}})
	if e, ok := err.(*core.Error); !ok || e.Code != core.CodeModelError || e.Message != "reply.tool_calls[0] must be an object" {
		t.Errorf("Reply: got %v, want model_error reply.tool_calls[0] must be an object", err)
	}
}
