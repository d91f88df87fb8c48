package core

// Echo is the built-in model. It needs no network and answers
// deterministically, saying how many messages it received, so seeding is
// visible:
//
//	echo: <last user text> (model received N messages)
//
// A user message of the form "/tool NAME ARGS" makes it call tool NAME
// with ARGS as the arguments (JSON text; "{}" when absent). Given the
// tool results, it answers:
//
//	tool NAME returned: <result> (model received N messages)
//
// It streams its reply as one delta per word.
type Echo struct{}

// EchoToolPrefix starts a user message that makes Echo call a tool.
const EchoToolPrefix = "/tool "

var _ ContextHonouring = Echo{}

// HonoursContext implements ContextHonouring: Echo never waits.
func (Echo) HonoursContext() {}

// Complete implements Model.
func (Echo) Complete(ctx Context, req *ModelRequest) (*ModelReply, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := len(req.Messages)
	received := " (model received " + itoa(n) + " messages)"
	if n == 0 {
		return &ModelReply{Content: "echo: (nothing)" + received}, nil
	}
	last := &req.Messages[n-1]
	var content string
	switch last.Role {
	case RoleTool:
		// Answer with every result of the latest block.
		i := n - 1
		for i > 0 && req.Messages[i-1].Role == RoleTool {
			i--
		}
		var parts string
		for k := i; k < n; k++ {
			m := &req.Messages[k]
			name := m.ToolCallID
			if i > 0 {
				calls := req.Messages[i-1].ToolCalls
				for c := range calls {
					if calls[c].ID == m.ToolCallID {
						name = calls[c].Name
					}
				}
			}
			if k > i {
				parts += "; "
			}
			parts += "tool " + name + " returned: " + m.Content
		}
		content = parts + received
	default:
		text := last.Content
		if len(text) >= len(EchoToolPrefix) && text[:len(EchoToolPrefix)] == EchoToolPrefix {
			spec := trimSpace(text[len(EchoToolPrefix):])
			name, args := spec, ""
			if i := indexByte(spec, ' '); i >= 0 {
				name, args = spec[:i], spec[i+1:]
			}
			args = trimSpace(args)
			if args == "" {
				args = "{}"
			}
			if name != "" {
				// append, not a one-element literal: the module then
				// needs no equality function for an array of one ToolCall.
				return &ModelReply{ToolCalls: append([]ToolCall(nil), ToolCall{
					ID:        "echo_" + itoa(n),
					Name:      name,
					Arguments: args,
				})}, nil
			}
		}
		content = "echo: " + text + received
	}
	rest := content
	for i := 0; rest != ""; i++ {
		j := indexByte(rest, ' ')
		if j < 0 || i == 63 { // a long reply streams its tail as one delta
			req.Delta(rest)
			break
		}
		req.Delta(rest[:j+1])
		rest = rest[j+1:]
	}
	return &ModelReply{Content: content}, nil
}

// indexByte is strings.IndexByte: core does without package strings,
// whose Unicode tables would grow the module.
func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// trimSpace drops ASCII white space at both ends of s.
func trimSpace(s string) string {
	for s != "" && isSpace(s[0]) {
		s = s[1:]
	}
	for s != "" && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
