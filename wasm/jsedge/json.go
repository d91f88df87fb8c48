package jsedge

import "github.com/agentrt/agentrt/internal/decimal"

import "github.com/agentrt/agentrt/core"

// JSON text written by hand (the module links no encoding/json): the edge
// builds some result objects as one JSON text that JavaScript's JSON.parse
// turns into objects with one call, instead of one call per field.

// appendJSONString appends s to b as a JSON string literal. Bytes that
// are not valid UTF-8 are copied as they are: the text reaches JavaScript
// through TextDecoder, which turns them into U+FFFD, as it does for any
// string the edge passes.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// inspected reports whether r carries the messages of its model calls.
func inspected(r *core.Result) bool {
	for i := range r.ModelCalls {
		if r.ModelCalls[i].Messages != nil {
			return true
		}
	}
	return false
}

// appendResultJSON appends r, except its messages, as the JSON text of a
// Result (see Result): reply and appended are null placeholders, and
// modelCalls carry no messages.
func appendResultJSON(b []byte, r *core.Result) []byte {
	b = append(b, `{"`+FieldRunID+`":`...)
	b = appendJSONString(b, r.RunID)
	b = append(b, `,"`+FieldSessionID+`":`...)
	b = appendJSONString(b, r.SessionID)
	b = append(b, `,"`+FieldStatus+`":`...)
	b = appendJSONString(b, r.Status)
	b = append(b, `,"`+FieldReply+`":null,"`+FieldAppended+`":null,"`+FieldSeed+`":{"`+FieldMode+`":`...)
	b = appendJSONString(b, string(r.Seed.Mode))
	b = append(b, `,"`+FieldSeeded+`":`...)
	b = appendJSONInt(b, r.Seed.Seeded)
	b = append(b, `,"`+FieldSkippedSystem+`":`...)
	b = appendJSONInt(b, r.Seed.SkippedSystem)
	b = append(b, `},"`+FieldMessageCount+`":`...)
	b = appendJSONInt(b, r.MessageCount)
	b = append(b, `,"`+FieldModelCalls+`":[`...)
	for i := range r.ModelCalls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"`+FieldStep+`":`...)
		b = appendJSONInt(b, r.ModelCalls[i].Step)
		b = append(b, `,"`+FieldMessageCount+`":`...)
		b = appendJSONInt(b, r.ModelCalls[i].MessageCount)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendJSONInt appends n in decimal.
func appendJSONInt(b []byte, n int) []byte { return append(b, itoa(n)...) }

// itoa formats n in decimal without strconv.
var itoa = decimal.Itoa
