package jshost

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
)

// maxJSONDepth bounds nesting in JSON.parse and JSON.stringify.
const maxJSONDepth = 1000

func (w *world) initJSON() {
	j := NewObject()
	j.Set("stringify", native("stringify", func(_ Value, args []Value) (Value, error) {
		indent := ""
		switch x := arg(args, 2).(type) {
		case float64:
			if x > 0 {
				indent = strings.Repeat(" ", int(math.Min(x, 10)))
			}
		case string:
			indent = x
			if len(indent) > 10 {
				indent = indent[:10]
			}
		}
		var b bytes.Buffer
		ok, err := stringifyJSON(&b, arg(args, 0), indent, 0, map[any]bool{})
		if err != nil {
			return nil, err
		}
		if !ok {
			return Undefined, nil
		}
		return b.String(), nil
	}))
	j.Set("parse", native("parse", func(_ Value, args []Value) (Value, error) {
		return parseJSON(toString(arg(args, 0)))
	}))
	w.global.Set("JSON", j)
}

// stringifyJSON writes v as JSON.stringify does, keeping property order.
// It reports false for values JSON leaves out (undefined, functions).
func stringifyJSON(b *bytes.Buffer, v Value, indent string, depth int, seen map[any]bool) (bool, error) {
	if depth > maxJSONDepth {
		return false, throwf("RangeError", "Maximum call stack size exceeded")
	}
	nl := func(d int) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(indent, d))
		}
	}
	switch x := v.(type) {
	case undefinedType, *Function:
		return false, nil
	case nullType:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(formatNumber(x))
		}
	case string:
		q, _ := json.Marshal(x)
		b.Write(q)
	case *Array:
		if seen[x] {
			return false, throwf("TypeError", "Converting circular structure to JSON")
		}
		seen[x] = true
		defer delete(seen, x)
		b.WriteByte('[')
		for i, e := range x.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			ok, err := stringifyJSON(b, e, indent, depth+1, seen)
			if err != nil {
				return false, err
			}
			if !ok {
				b.WriteString("null")
			}
		}
		if len(x.Elems) > 0 {
			nl(depth)
		}
		b.WriteByte(']')
	case *Uint8Array:
		b.WriteByte('{')
		for i, c := range x.Bytes {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + formatNumber(float64(i)) + `":` + formatNumber(float64(c)))
		}
		b.WriteByte('}')
	default:
		bag := bagOf(v)
		if bag == nil {
			return false, nil
		}
		if seen[v] {
			return false, throwf("TypeError", "Converting circular structure to JSON")
		}
		seen[v] = true
		defer delete(seen, v)
		if o, ok := v.(*Object); ok && o.Class == "Date" {
			q, _ := json.Marshal(toString(o))
			b.Write(q)
			return true, nil
		}
		b.WriteByte('{')
		n := 0
		for _, k := range bag.keys {
			mark := b.Len()
			if n > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			ok, err := stringifyJSON(b, bag.m[k], indent, depth+1, seen)
			if err != nil {
				return false, err
			}
			if !ok {
				b.Truncate(mark)
				continue
			}
			n++
		}
		if n > 0 {
			nl(depth)
		}
		b.WriteByte('}')
	}
	return true, nil
}

// parseJSON is JSON.parse: objects keep their key order.
func parseJSON(s string) (Value, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := parseJSONValue(d, 0)
	if err == nil {
		if _, terr := d.Token(); terr != io.EOF {
			err = errors.New("unexpected data after JSON value")
		}
	}
	if err != nil {
		return nil, throwf("SyntaxError", "JSON.parse: %v", err)
	}
	return v, nil
}

func parseJSONValue(d *json.Decoder, depth int) (Value, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("too deeply nested")
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case nil:
		return Null, nil
	case bool, string:
		return x, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil && !math.IsInf(f, 0) {
			return nil, err
		}
		return f, nil
	case json.Delim:
		switch x {
		case '[':
			a := &Array{}
			for d.More() {
				e, err := parseJSONValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				a.Elems = append(a.Elems, e)
			}
			_, err := d.Token()
			return a, err
		case '{':
			o := NewObject()
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				e, err := parseJSONValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				o.Set(k, e)
			}
			_, err := d.Token()
			return o, err
		}
	}
	return nil, errors.New("unexpected token")
}
