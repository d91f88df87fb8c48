package hostmsg

import (
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
)

// The fields of a policy and of limits, as every edge names them (the
// glue, the syscall/js API, HTTP, the begin frame's JSON text). Policy
// and Limits read the numbers by walking these tables, so their order is
// the one those functions assign them in.
var (
	policyFields = [...]string{
		FieldSeedMode, FieldOnBusy, FieldToolErrors,
		FieldMaxSteps, FieldMaxContextMessages, FieldMaxContextBytes, FieldTimeoutMs,
		FieldMaxContextTokens, FieldContextChunkTokens,
		FieldAllowedTools, FieldRepair,
	}
	limitsFields = [...]string{
		FieldMaxSessions, FieldMaxMessagesPerSession, FieldMaxSessionBytes,
		FieldMaxSeedMessages, FieldMaxSeedBytes, FieldMaxMessageBytes, FieldMaxTotalBytes,
	}
)

// Field names of a policy (core.Policy) and of limits (core.Limits).
const (
	FieldSeedMode              = "seedMode"
	FieldOnBusy                = "onBusy"
	FieldToolErrors            = "toolErrors"
	FieldMaxSteps              = "maxSteps"
	FieldMaxContextMessages    = "maxContextMessages"
	FieldMaxContextBytes       = "maxContextBytes"
	FieldTimeoutMs             = "timeoutMs"
	FieldMaxContextTokens      = "maxContextTokens"
	FieldContextChunkTokens    = "contextChunkTokens"
	FieldAllowedTools          = "allowedTools"
	FieldRepair                = "repair"
	FieldMaxSessions           = "maxSessions"
	FieldMaxMessagesPerSession = "maxMessagesPerSession"
	FieldMaxSessionBytes       = "maxSessionBytes"
	FieldMaxSeedMessages       = "maxSeedMessages"
	FieldMaxSeedBytes          = "maxSeedBytes"
	FieldMaxMessageBytes       = "maxMessageBytes"
	FieldMaxTotalBytes         = "maxTotalBytes"
)

func argError(msg string) error { return core.NewError(core.CodeInvalidArgument, msg) }

// object checks that v is an object, or absent (null or undefined: ok
// false, no error), and that each of its keys is exactly one of known
// or of extra, once. what names v in the errors.
func object[V Value[V]](v V, what string, known, extra []string) (ok bool, err error) {
	switch v.Kind() {
	case Undefined, Null:
		return false, nil
	case Array:
		return false, argError(what + " must be an object, not an Array")
	case Object:
	default:
		return false, argError(what + " must be an object")
	}
	keys := v.Keys()
	for i, k := range keys {
		found := false
		for _, name := range known {
			found = found || k == name
		}
		for _, name := range extra {
			found = found || k == name
		}
		if !found {
			return false, argError("unknown " + what + " field \"" + k + "\"")
		}
		for _, before := range keys[:i] {
			if before == k {
				return false, argError("duplicate " + what + " field \"" + k + "\"")
			}
		}
	}
	return true, nil
}

// integer reads field name of o: absent (null or undefined) is 0; an
// integer is passed on for core's Validate to bound (one past
// core.MaxBytes for a larger one, a negative one kept negative), so
// that a bound has core's one text at every edge. Anything else (a
// fraction, a string, NaN) is refused.
func integer[V Value[V]](o V, what, name string) (int64, error) {
	v := o.Get(name)
	switch v.Kind() {
	case Undefined, Null:
		return 0, nil
	case Number:
		f := v.Number()
		switch {
		case f > core.MaxBytes:
			return core.MaxBytes + 1, nil
		case f < -core.MaxBytes:
			return -1, nil
		case f == float64(int64(f)):
			return int64(f), nil
		}
	}
	return 0, argError(what + "." + name + " must be a non-negative integer")
}

// Policy reads a host's policy, an object of the fields of core.Policy
// by their names in docs/contract.md; null or undefined is the zero
// (default) Policy, as is an absent field. A key that is not exactly a
// field's name (or one of extra, which the caller reads itself), a key
// given twice, or a field of the wrong type is refused with
// core.CodeInvalidArgument naming it; the values are then checked by
// core.Policy.Validate, whose error is returned as it is. Every edge
// reads a policy with it: jsedge, httpapi and the begin frame's JSON
// text (wire.DecodeBegin).
func Policy[V Value[V]](v V, extra ...string) (p core.Policy, err error) {
	const what = "policy"
	if ok, err := object(v, what, policyFields[:], extra); !ok {
		return p, err
	}
	var s [3]string
	for i := range s {
		switch f := v.Get(policyFields[i]); f.Kind() {
		case Undefined, Null:
		case String:
			s[i] = f.Text()
		default:
			return p, argError(what + "." + policyFields[i] + " must be a string")
		}
	}
	var n [6]int64
	for i := range n {
		if n[i], err = integer(v, what, policyFields[len(s)+i]); err != nil {
			return p, err
		}
	}
	p = core.Policy{SeedMode: core.SeedMode(s[0]), OnBusy: core.BusyMode(s[1]), ToolErrors: core.ToolErrorMode(s[2]),
		MaxSteps: int(n[0]), MaxContextMessages: int(n[1]), MaxContextBytes: n[2], TimeoutMs: n[3],
		MaxContextTokens: n[4], ContextChunkTokens: n[5]}
	switch r := v.Get(FieldRepair); r.Kind() {
	case Undefined, Null:
	case Bool:
		p.Repair = r.Bool()
	default:
		return p, argError("policy.repair must be a boolean")
	}
	switch tools := v.Get(FieldAllowedTools); tools.Kind() {
	case Undefined, Null:
	case Array:
		p.AllowedTools = make([]string, tools.Len())
		for i := range p.AllowedTools {
			t := tools.Index(i)
			if t.Kind() != String {
				return p, argError("policy.allowedTools[" + itoa(i) + "] must be a string")
			}
			p.AllowedTools[i] = t.Text()
		}
	default:
		return p, argError("policy.allowedTools must be an array of strings")
	}
	return p, p.Validate()
}

// Limits reads a host's limits, an object of the fields of core.Limits
// by their names in docs/contract.md (integers; absent, null or 0 means
// the default); null or undefined is the zero Limits. A key that is not
// exactly a field's name, a key given twice, or a field that is not an
// integer is refused with core.CodeInvalidArgument naming it; the values
// are then checked by core.Limits.Validate, whose error is returned as it
// is.
func Limits[V Value[V]](v V) (l core.Limits, err error) {
	const what = "limits"
	if ok, err := object(v, what, limitsFields[:], nil); !ok {
		return l, err
	}
	var n [len(limitsFields)]int64
	for i := range n {
		if n[i], err = integer(v, what, limitsFields[i]); err != nil {
			return l, err
		}
	}
	l = core.Limits{MaxSessions: int(n[0]), MaxMessagesPerSession: int(n[1]), MaxSessionBytes: n[2],
		MaxSeedMessages: int(n[3]), MaxSeedBytes: n[4], MaxMessageBytes: n[5], MaxTotalBytes: n[6]}
	return l, l.Validate()
}

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
