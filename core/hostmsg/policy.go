package hostmsg

import "github.com/agentrt/agentrt/core"

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
