// Package hostjson implements hostmsg.Value over JSON text, for the edges
// that receive host messages as JSON: the HTTP API and the CLI's history
// file.
//
//	v, err := hostjson.Parse(body)
//	if err != nil { ... }                 // not JSON
//	h, err := hostmsg.Messages(v, 0)
//
// Parse keeps the order of every object's fields, so that an object's
// JSON text (tool-call arguments, a tool part's output) is what
// JavaScript's JSON.stringify(JSON.parse(text)) gives for the same text,
// except that numbers are kept as they are written (1.0 stays 1.0). A
// field that appears twice takes the last value, at its first place, as
// in JavaScript.
//
// The package uses encoding/json and is not part of the module phones
// download.
package hostjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/agentrt/agentrt/core/hostmsg"
)

// MaxDepth bounds the nesting of arrays and objects Parse accepts.
const MaxDepth = 1000

// Value is one parsed JSON value, or an absent one. The zero Value is
// absent (kind hostmsg.Undefined).
type Value struct{ n *node }

type node struct {
	kind  hostmsg.Kind
	text  string // a string's text, a number's literal
	elems []Value
	keys  []string
	vals  []Value
	// dups holds the keys the object's text gave more than once, each
	// time after the first (see Keys).
	dups []string
	// index maps keys to their place once an object has more than
	// indexAfter of them, so that neither parsing nor Get is quadratic in
	// the number of keys a request can hold.
	index map[string]int
}

// indexAfter is the number of keys an object holds before it gets an
// index: below it a linear scan is cheaper than a map.
const indexAfter = 16

var _ hostmsg.Value[Value] = Value{}

// Parse parses one JSON value. Text after the value, other than
// whitespace, is an error.
func Parse(data []byte) (Value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := parse(d, 0)
	if err != nil {
		return Value{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		return Value{}, errors.New("hostjson: text after the JSON value")
	}
	return v, nil
}

func parse(d *json.Decoder, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, errors.New("hostjson: nested too deeply")
	}
	t, err := d.Token()
	if err != nil {
		return Value{}, err
	}
	switch x := t.(type) {
	case nil:
		return Value{&node{kind: hostmsg.Null}}, nil
	case bool:
		s := "false"
		if x {
			s = "true"
		}
		return Value{&node{kind: hostmsg.Bool, text: s}}, nil
	case json.Number:
		return Value{&node{kind: hostmsg.Number, text: string(x)}}, nil
	case string:
		return Value{&node{kind: hostmsg.String, text: x}}, nil
	case json.Delim:
		switch x {
		case '[':
			n := &node{kind: hostmsg.Array}
			for d.More() {
				e, err := parse(d, depth+1)
				if err != nil {
					return Value{}, err
				}
				n.elems = append(n.elems, e)
			}
			_, err := d.Token()
			return Value{n}, err
		case '{':
			n := &node{kind: hostmsg.Object}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return Value{}, err
				}
				key, _ := k.(string)
				v, err := parse(d, depth+1)
				if err != nil {
					return Value{}, err
				}
				if i := n.find(key); i >= 0 {
					n.vals[i] = v
					n.dups = append(n.dups, key)
				} else {
					n.add(key, v)
				}
			}
			_, err := d.Token()
			return Value{n}, err
		}
	}
	return Value{}, errors.New("hostjson: unexpected token")
}

// find returns the place of key in the object, or -1.
func (n *node) find(key string) int {
	if n.index != nil {
		if i, ok := n.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range n.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// add appends a key that is not in the object yet.
func (n *node) add(key string, v Value) {
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
	switch {
	case n.index != nil:
		n.index[key] = len(n.keys) - 1
	case len(n.keys) > indexAfter:
		n.index = make(map[string]int, 2*len(n.keys))
		for i, k := range n.keys {
			n.index[k] = i
		}
	}
}

// Kind implements hostmsg.Value.
func (v Value) Kind() hostmsg.Kind {
	if v.n == nil {
		return hostmsg.Undefined
	}
	return v.n.kind
}

// Text implements hostmsg.Value: a string's text ("" for other kinds).
func (v Value) Text() string {
	if v.Kind() != hostmsg.String {
		return ""
	}
	return v.n.text
}

// Len implements hostmsg.Value: an array's length (0 for other kinds).
func (v Value) Len() int {
	if v.Kind() != hostmsg.Array {
		return 0
	}
	return len(v.n.elems)
}

// Index implements hostmsg.Value: element i of an array, or an absent
// value.
func (v Value) Index(i int) Value {
	if v.Kind() != hostmsg.Array || i < 0 || i >= len(v.n.elems) {
		return Value{}
	}
	return v.n.elems[i]
}

// Get implements hostmsg.Value: field key of an object, or an absent
// value.
func (v Value) Get(key string) Value {
	if v.Kind() != hostmsg.Object {
		return Value{}
	}
	if i := v.n.find(key); i >= 0 {
		return v.n.vals[i]
	}
	return Value{}
}

// Keys implements hostmsg.Value: an object's keys in order, then each
// key the text repeated, once per repetition (nil for other kinds).
func (v Value) Keys() []string {
	if v.Kind() != hostmsg.Object {
		return nil
	}
	if len(v.n.dups) == 0 {
		return v.n.keys
	}
	return append(append([]string(nil), v.n.keys...), v.n.dups...)
}

// Number implements hostmsg.Value: a number's value (0 for other
// kinds); a number too large for a float64 is an infinity.
func (v Value) Number() float64 {
	if v.Kind() != hostmsg.Number {
		return 0
	}
	f, _ := strconv.ParseFloat(v.n.text, 64)
	return f
}

// Bool implements hostmsg.Value: whether the value is true.
func (v Value) Bool() bool { return v.Kind() == hostmsg.Bool && v.n.text == "true" }

// JSON implements hostmsg.Value: the value's compact JSON text, strings
// escaped as JSON.stringify escapes them. An absent value has none.
func (v Value) JSON() (string, bool) {
	if v.n == nil {
		return "", false
	}
	var b []byte
	b = v.appendJSON(b)
	return string(b), true
}

func (v Value) appendJSON(b []byte) []byte {
	n := v.n
	switch n.kind {
	case hostmsg.Null:
		return append(b, "null"...)
	case hostmsg.Bool, hostmsg.Number:
		return append(b, n.text...)
	case hostmsg.String:
		return AppendString(b, n.text)
	case hostmsg.Array:
		b = append(b, '[')
		for i, e := range n.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendJSON(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i, k := range n.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		b = n.vals[i].appendJSON(b)
	}
	return append(b, '}')
}

// AppendString appends s as a JSON string, escaped as JavaScript's
// JSON.stringify escapes it: quote, backslash and control characters
// only.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c >= 0x20:
			b = append(b, c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
	}
	return append(b, '"')
}
