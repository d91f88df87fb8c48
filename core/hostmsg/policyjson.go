package hostmsg

import (
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
)

// AppendPolicyJSON appends p as the JSON text Policy reads back (the
// fields of policyFields that are not zero, by their names; a nil
// AllowedTools left out, an empty one written as []): "{}" for the zero
// Policy. A Go host writes a policy so into a begin frame
// (wire.AppendBegin), as the glue does with JSON.stringify, so that the
// frame carries a policy in one form and a new field crosses the wire
// with no code of the wire's own. Values are written as they are, for
// Policy's reader and core.Policy.Validate to refuse (a negative
// number, an unknown mode); a string that is not valid UTF-8 has each
// bad byte written as U+FFFD.
func AppendPolicyJSON(dst []byte, p *core.Policy) []byte {
	dst = append(dst, '{')
	start := len(dst)
	for i, s := range [...]string{string(p.SeedMode), string(p.OnBusy), string(p.ToolErrors)} {
		if s != "" {
			dst = appendJSONString(appendKey(dst, start, policyFields[i]), s)
		}
	}
	for i, n := range [...]int64{int64(p.MaxSteps), int64(p.MaxContextMessages), p.MaxContextBytes, p.TimeoutMs,
		p.MaxContextTokens, p.ContextChunkTokens} {
		if n != 0 {
			dst = appendInt(appendKey(dst, start, policyFields[3+i]), n)
		}
	}
	if p.AllowedTools != nil {
		dst = append(appendKey(dst, start, FieldAllowedTools), '[')
		for i, t := range p.AllowedTools {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, t)
		}
		dst = append(dst, ']')
	}
	if p.Repair {
		dst = append(appendKey(dst, start, FieldRepair), "true"...)
	}
	return append(dst, '}')
}

// appendKey appends "name": after a comma unless it is the object's
// first key (the object's text starts at start).
func appendKey(dst []byte, start int, name string) []byte {
	if len(dst) > start {
		dst = append(dst, ',')
	}
	return append(appendJSONString(dst, name), ':')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\\ufffd"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

// appendInt appends n in decimal.
func appendInt(dst []byte, n int64) []byte {
	if n < 0 {
		dst = append(dst, '-')
		if n == -n { // the smallest int64
			return append(dst, "9223372036854775808"...)
		}
		n = -n
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}
