package wire

import "github.com/agentrt/agentrt/core"

// The frames of the operations' export, agentrt_op (docs/wire.md,
// "Operations"): one export for every control operation of the module's
// table of operations, each named in its frame, its arguments and its
// answer values of a few kinds, so that a new operation needs no export,
// frame or codec of its own on either side of the wire.

// KindValue is the module's answer to an op frame: one value.
const KindValue Kind = 0x18

// ValueKind is the kind of a Value.
type ValueKind byte

// The kinds of a Value, as its first byte on the wire.
const (
	ValueNull  ValueKind = 0 // absent: null, or an argument not given
	ValueFalse ValueKind = 1
	ValueTrue  ValueKind = 2
	ValueText  ValueKind = 3 // a string, as its UTF-8 bytes
)

// Value is an argument of an op frame, or its answer: null, a boolean or
// a text.
type Value struct {
	// The field of no size makes Value not comparable: no equality
	// function is compiled into the module for it.
	_    [0]func()
	Kind ValueKind
	// Text is the text of a ValueText.
	Text string
}

// Text returns the Value of text s.
func Text(s string) Value { return Value{Kind: ValueText, Text: s} }

// Bool returns the Value of b.
func Bool(b bool) Value {
	if b {
		return Value{Kind: ValueTrue}
	}
	return Value{Kind: ValueFalse}
}

// appendValue appends v: its kind, then a text's string.
func appendValue(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.Kind))
	if v.Kind == ValueText {
		dst = AppendString(dst, v.Text)
	}
	return dst
}

// value reads a Value.
func (r *reader) value(what string) Value {
	k := ValueKind(r.byte())
	switch k {
	case ValueNull, ValueFalse, ValueTrue:
		return Value{Kind: k}
	case ValueText:
		return Text(r.str(what))
	}
	r.fail(what + " has an unknown kind")
	return Value{}
}

// AppendOp appends the input of agentrt_op: the operation's name, the
// count of its arguments and each argument, with no frame header, like
// the other control inputs.
func AppendOp(dst []byte, name string, args ...Value) []byte {
	dst = AppendString(dst, name)
	dst = AppendUvarint(dst, uint64(len(args)))
	for _, a := range args {
		dst = appendValue(dst, a)
	}
	return dst
}

// DecodeOp decodes the input of agentrt_op: the operation's name and its
// arguments. A malformed input is refused with invalid_argument.
func DecodeOp(b []byte) (name string, args []Value, err error) {
	r := &reader{s: string(b), index: core.NoIndex, code: core.CodeInvalidArgument, prefix: "op: "}
	name = r.str("operation name")
	if n := r.count("argument count", 1); r.err == nil && n > 0 {
		args = make([]Value, n)
		for i := range args {
			args[i] = r.value("argument")
		}
	}
	if err := r.end(); err != nil {
		return "", nil, err
	}
	return name, args, nil
}

// AppendValue appends a value frame of v.
func AppendValue(dst []byte, v Value) []byte {
	return appendValue(appendHeader(dst, KindValue), v)
}

// DecodeValue decodes a value frame.
func DecodeValue(b []byte) (Value, error) {
	r := newReader(b, KindValue)
	v := r.value("value")
	if err := r.end(); err != nil {
		return Value{}, err
	}
	return v, nil
}
