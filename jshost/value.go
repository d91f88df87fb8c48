package jshost

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Value is a JavaScript value of an Instance's object world. It is always
// one of:
//
//	Undefined          undefined
//	Null               null
//	bool               boolean
//	float64            number
//	string             string
//	*Object            plain object, Error (Class "Error", "TypeError", ...), Date
//	*Array             Array (also a callback's arguments)
//	*Function          function
//	*Uint8Array        Uint8Array
//	*Promise           Promise
//
// The nil interface is never a Value of the world; functions that accept
// Go values (see ToJS) read nil as null.
type Value = any

type undefinedType struct{}
type nullType struct{}

func (undefinedType) String() string { return "undefined" }
func (nullType) String() string      { return "null" }

// Undefined is JavaScript's undefined.
var Undefined Value = undefinedType{}

// Null is JavaScript's null.
var Null Value = nullType{}

// props is the ordered own-property bag shared by every object kind.
type props struct {
	keys []string
	m    map[string]Value
	// frozen is set by Object.freeze: writes and deletes are then ignored,
	// as Reflect.set and Reflect.deleteProperty (what wasm_exec.js uses)
	// ignore them, reporting false.
	frozen bool
}

func (p *props) getOwn(k string) (Value, bool) {
	v, ok := p.m[k]
	return v, ok
}

func (p *props) setOwn(k string, v Value) {
	if p.frozen {
		return
	}
	if p.m == nil {
		p.m = make(map[string]Value)
	}
	if _, ok := p.m[k]; !ok {
		p.keys = append(p.keys, k)
	}
	p.m[k] = v
}

func (p *props) delOwn(k string) {
	if _, ok := p.m[k]; !ok || p.frozen {
		return
	}
	delete(p.m, k)
	for i, key := range p.keys {
		if key == k {
			p.keys = append(p.keys[:i], p.keys[i+1:]...)
			break
		}
	}
}

// Get returns the own property k, or Undefined.
func (p *props) Get(k string) Value {
	if v, ok := p.getOwn(k); ok {
		return v
	}
	return Undefined
}

// Set sets the own property k to v, which must be a Value (see ToJS).
func (p *props) Set(k string, v Value) { p.setOwn(k, v) }

// Keys returns the object's own property names in insertion order.
func (p *props) Keys() []string { return append([]string(nil), p.keys...) }

// Object is a JavaScript object: a plain object, an Error or a Date.
//
// # Notes
//
//   - Like every Value, an Object belongs to its Instance's event loop:
//     read it directly only inside a Go function the guest calls, or once
//     the guest no longer changes it. Elsewhere use Instance.Get and
//     Instance.Export.
type Object struct {
	props
	// Class is "Object" for plain objects, the constructor's name for
	// errors ("Error", "TypeError", "RangeError") and "Date" for dates.
	Class string
	date  float64 // milliseconds since the epoch, for Date
}

// NewObject returns an empty plain object.
func NewObject() *Object { return &Object{Class: "Object"} }

// IsError reports whether o was made by Error or one of its subclasses.
func (o *Object) IsError() bool { return strings.HasSuffix(o.Class, "Error") }

// Array is a JavaScript array.
type Array struct {
	props
	// Elems are the elements; a hole is Undefined.
	Elems []Value
}

// NewArray returns an array holding elems (not copied).
func NewArray(elems ...Value) *Array { return &Array{Elems: elems} }

// Function is a JavaScript function: a Go function exposed to the guest,
// a built-in of the world, or a wrapper around a js.FuncOf of the guest.
type Function struct {
	props
	// Name is the function's name property.
	Name      string
	call      func(this Value, args []Value) (Value, error)
	construct func(args []Value) (Value, error)
	instance  func(Value) bool // the instanceof test of a constructor
}

// Uint8Array is a JavaScript Uint8Array.
type Uint8Array struct {
	props
	// Bytes is the array's storage.
	Bytes []byte
}

// Promise is a JavaScript Promise. Settle one made by Instance.NewPromise
// with the functions returned with it; await any with Instance.Await.
type Promise struct {
	props
	state     promiseState
	value     Value
	reactions []func()
	handled   bool
}

type promiseState int

const (
	pending promiseState = iota
	fulfilled
	rejected
)

// typeOf returns JavaScript's typeof of v.
func typeOf(v Value) string {
	switch v.(type) {
	case undefinedType:
		return "undefined"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case *Function:
		return "function"
	}
	return "object"
}

// isObject reports whether v is an object or function (not null).
func isObject(v Value) bool {
	switch v.(type) {
	case *Object, *Array, *Function, *Uint8Array, *Promise:
		return true
	}
	return false
}

func bagOf(v Value) *props {
	switch x := v.(type) {
	case *Object:
		return &x.props
	case *Array:
		return &x.props
	case *Function:
		return &x.props
	case *Uint8Array:
		return &x.props
	case *Promise:
		return &x.props
	}
	return nil
}

// arrayIndex parses a canonical array index.
func arrayIndex(k string) (int, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// maxArrayLength bounds arrays the guest may create with new Array(n) or
// by setting length, so that bad input cannot exhaust the host's memory.
const maxArrayLength = 1 << 26

// getIndex reads v[i] for arrays, typed arrays and strings.
func getIndex(v Value, i int) (Value, bool) {
	switch x := v.(type) {
	case *Array:
		if i >= 0 && i < len(x.Elems) {
			return x.Elems[i], true
		}
		return Undefined, true
	case *Uint8Array:
		if i >= 0 && i < len(x.Bytes) {
			return float64(x.Bytes[i]), true
		}
		return Undefined, true
	}
	return nil, false
}

// setIndex sets v[i] for arrays and typed arrays.
func setIndex(v Value, i int, x Value) bool {
	if b := bagOf(v); b != nil && b.frozen {
		return true
	}
	switch a := v.(type) {
	case *Array:
		if i < 0 || i >= maxArrayLength {
			return true
		}
		for len(a.Elems) <= i {
			a.Elems = append(a.Elems, Undefined)
		}
		a.Elems[i] = x
		return true
	case *Uint8Array:
		if i >= 0 && i < len(a.Bytes) {
			a.Bytes[i] = byte(int64(toNumber(x)))
		}
		return true
	}
	return false
}

// jsLength is the length of a string in UTF-16 code units, as JavaScript
// counts it.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// toNumber converts like JavaScript's Number(v), for the cases the host
// needs.
func toNumber(v Value) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	case nullType:
		return 0
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

// formatNumber formats f as JavaScript's String(f) does for the common
// cases.
func formatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	case f == math.Trunc(f) && math.Abs(f) < 1e21:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if strings.Contains(s, "e") {
		s = strings.Replace(s, "e-0", "e-", 1)
		s = strings.Replace(s, "e+0", "e+", 1)
	}
	return s
}

// toString converts like JavaScript's String(v).
func toString(v Value) string {
	return toStringDepth(v, 0)
}

func toStringDepth(v Value, depth int) string {
	if depth > 32 {
		return ""
	}
	switch x := v.(type) {
	case undefinedType:
		return "undefined"
	case nullType:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return formatNumber(x)
	case string:
		return x
	case *Object:
		if x.IsError() {
			name := toStringDepth(orDefault(x.Get("name"), x.Class), depth+1)
			msg := toStringDepth(orDefault(x.Get("message"), ""), depth+1)
			switch {
			case msg == "":
				return name
			case name == "":
				return msg
			}
			return name + ": " + msg
		}
		if x.Class == "Date" {
			return dateString(x.date)
		}
		return "[object Object]"
	case *Array:
		parts := make([]string, len(x.Elems))
		for i, e := range x.Elems {
			switch e.(type) {
			case undefinedType, nullType:
			default:
				parts[i] = toStringDepth(e, depth+1)
			}
		}
		return strings.Join(parts, ",")
	case *Uint8Array:
		parts := make([]string, len(x.Bytes))
		for i, b := range x.Bytes {
			parts[i] = strconv.Itoa(int(b))
		}
		return strings.Join(parts, ",")
	case *Function:
		return "function " + x.Name + "() { [native code] }"
	case *Promise:
		return "[object Promise]"
	}
	return ""
}

func orDefault(v Value, def Value) Value {
	if _, ok := v.(undefinedType); ok {
		return def
	}
	return v
}

// Func is a Go function exposed to JavaScript. this and args are the
// call's receiver and arguments. The result is converted with ToJS; a
// non-nil error is thrown: an *Exception throws its Value, any other
// error throws a new Error with the error's text as message.
//
// # Notes
//
//   - It runs on the instance's event loop, possibly in the middle of a
//     call into the guest: it may read its arguments directly and call
//     back into the guest (Invoke a *Function argument), but it must not
//     block for long, and it must not call the Instance's methods (they
//     wait for the loop, which is busy running it). To answer later,
//     return a Promise from Instance.NewPromise and settle it from another
//     goroutine.
//   - A panic in it is recovered and thrown as an Error.
type Func func(this Value, args []Value) (any, error)

// ToJS converts a Go value into a Value of the world:
//
//	| Go                                   | JavaScript                |
//	| ------------------------------------ | ------------------------- |
//	| Value (Undefined, Null, *Object ...) | the same value            |
//	| nil                                  | null                      |
//	| bool                                 | boolean                   |
//	| int*, uint*, float*                  | number                    |
//	| string                               | string                    |
//	| []byte                               | Uint8Array (a copy)       |
//	| slices and arrays of other types     | Array of converted values |
//	| map[string]T                         | object (keys sorted)      |
//	| Func, func([]Value) (any, error)     | function (see Func)       |
//	| error                                | Error with its message    |
//
// Any other type (structs, channels, maps with non-string keys) is an
// error; so is a cycle of Go maps or slices (it stops at depth 100).
func ToJS(x any) (Value, error) { return toJS(x, 0) }

func toJS(x any, depth int) (Value, error) {
	if depth > 100 {
		return nil, fmt.Errorf("jshost: value nested more than 100 levels deep (a cycle?)")
	}
	switch v := x.(type) {
	case nil:
		return Null, nil
	case undefinedType, nullType, bool, float64, string,
		*Object, *Array, *Function, *Uint8Array, *Promise:
		return v, nil
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case uint32:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case float32:
		return float64(v), nil
	case []byte:
		return &Uint8Array{Bytes: append([]byte{}, v...)}, nil
	case []any:
		a := &Array{Elems: make([]Value, len(v))}
		for i, e := range v {
			c, err := toJS(e, depth+1)
			if err != nil {
				return nil, err
			}
			a.Elems[i] = c
		}
		return a, nil
	case map[string]any:
		o := NewObject()
		for _, k := range sortedKeys(v) {
			c, err := toJS(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			o.Set(k, c)
		}
		return o, nil
	case Func:
		return goFunction(v), nil
	case func(this Value, args []Value) (any, error):
		return goFunction(v), nil
	case func(args []Value) (any, error):
		return goFunction(func(_ Value, args []Value) (any, error) { return v(args) }), nil
	case *Exception:
		return v.Value, nil
	case error:
		return newError("Error", v.Error()), nil
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return Null, nil
		}
		a := &Array{Elems: make([]Value, rv.Len())}
		for i := range a.Elems {
			c, err := toJS(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			a.Elems[i] = c
		}
		return a, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		if rv.IsNil() {
			return Null, nil
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		o := NewObject()
		for _, k := range keys {
			c, err := toJS(rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			o.Set(k, c)
		}
		return o, nil
	case reflect.Pointer:
		if rv.IsNil() {
			return Null, nil
		}
	}
	return nil, fmt.Errorf("jshost: cannot convert a Go %T to JavaScript", x)
}

// Export converts a Value into plain Go values: Undefined and Null become
// nil, objects map[string]any (an Error includes its name and message),
// arrays []any, Uint8Array []byte (a copy); booleans, numbers and strings
// stay; functions and promises stay as they are. A value met again inside
// itself (a cycle) becomes nil.
//
// Call it on the event loop (inside a Func) or on values the guest no
// longer changes; elsewhere use Instance.Export.
func Export(v Value) any { return export(v, map[any]bool{}) }

func export(v Value, seen map[any]bool) any {
	switch x := v.(type) {
	case undefinedType, nullType, nil:
		return nil
	case *Object:
		if seen[x] {
			return nil
		}
		seen[x] = true
		defer delete(seen, x)
		m := make(map[string]any, len(x.keys)+2)
		if x.IsError() {
			m["name"] = toString(orDefault(x.Get("name"), x.Class))
			m["message"] = toString(orDefault(x.Get("message"), ""))
		}
		for _, k := range x.keys {
			m[k] = export(x.m[k], seen)
		}
		return m
	case *Array:
		if seen[x] {
			return nil
		}
		seen[x] = true
		defer delete(seen, x)
		out := make([]any, len(x.Elems))
		for i, e := range x.Elems {
			out[i] = export(e, seen)
		}
		return out
	case *Uint8Array:
		return append([]byte{}, x.Bytes...)
	}
	return v
}

// Get follows path from v through own properties and array indexes,
// returning Undefined where a step is missing. Get(v) is v.
//
// Call it on the event loop or on values the guest no longer changes;
// elsewhere use Instance.Get.
func Get(v Value, path ...string) Value {
	for _, k := range path {
		v = getOwnOrIndex(v, k)
	}
	return v
}

func getOwnOrIndex(v Value, k string) Value {
	if i, ok := arrayIndex(k); ok {
		if e, ok := getIndex(v, i); ok {
			return e
		}
	}
	if k == "length" {
		switch x := v.(type) {
		case *Array:
			return float64(len(x.Elems))
		case *Uint8Array:
			return float64(len(x.Bytes))
		case string:
			return float64(jsLength(x))
		}
	}
	if b := bagOf(v); b != nil {
		if e, ok := b.getOwn(k); ok {
			return e
		}
	}
	return Undefined
}

func newError(class, message string) *Object {
	o := &Object{Class: class}
	o.Set("name", class)
	o.Set("message", message)
	return o
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Invoke calls f with this undefined and args converted by ToJS. A thrown
// value is returned as an *Exception.
//
// Call it only on the event loop, inside a Func (this is how a Go function
// calls back into the guest while the guest is calling it); elsewhere use
// Instance.Invoke.
func (f *Function) Invoke(args ...any) (Value, error) {
	vs := make([]Value, len(args))
	for i, a := range args {
		v, err := ToJS(a)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	if f == nil || f.call == nil {
		return nil, throwf("TypeError", "not a function")
	}
	return f.call(Undefined, vs)
}
