package jshost_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// Ensure the built-in globals behave as JavaScript's on the cases the
// guest and the module use, and refuse bad input with a thrown error.
func TestWorld_Globals(t *testing.T) {
	in, _ := serving(t)
	ctx := context.Background()
	jsonObj := in.Global("JSON")
	tests := []struct {
		name   string
		call   func() (jshost.Value, error)
		want   string
		errStr string
	}{
		{name: "OKStringifyKeepsOrder", call: func() (jshost.Value, error) {
			o, _ := in.Call(ctx, jsonObj, "parse", `{"z":1,"a":[true,null,"s"],"m":{"x":1.5}}`)
			return in.Call(ctx, jsonObj, "stringify", o)
		}, want: `{"z":1,"a":[true,null,"s"],"m":{"x":1.5}}`},
		{name: "ErrParse", call: func() (jshost.Value, error) {
			return in.Call(ctx, jsonObj, "parse", `{"a":`)
		}, errStr: "SyntaxError"},
		{name: "ErrParseTrailing", call: func() (jshost.Value, error) {
			return in.Call(ctx, jsonObj, "parse", `{} x`)
		}, errStr: "SyntaxError"},
		{name: "ErrParseDeep", call: func() (jshost.Value, error) {
			return in.Call(ctx, jsonObj, "parse", strings.Repeat("[", 5000)+strings.Repeat("]", 5000))
		}, errStr: "SyntaxError"},
		// Ensure a frozen object ignores writes, as Reflect.set does.
		{name: "OKObjectFreeze", call: func() (jshost.Value, error) {
			o, _ := in.Call(ctx, jsonObj, "parse", `{"a":[1]}`)
			if _, err := in.Call(ctx, in.Global("Object"), "freeze", o); err != nil {
				return nil, err
			}
			if err := in.Set(o, "a", "changed"); err != nil {
				return nil, err
			}
			if err := in.Set(o, "b", 2); err != nil {
				return nil, err
			}
			return in.Call(ctx, jsonObj, "stringify", o)
		}, want: `{"a":[1]}`},
		// Ensure bind fixes this and leading arguments.
		{name: "OKFunctionBind", call: func() (jshost.Value, error) {
			of := in.Get(in.Global("Array"), "of")
			b, err := in.Call(ctx, of, "bind", nil, "a")
			if err != nil {
				return nil, err
			}
			a, err := in.Invoke(ctx, b, "b")
			if err != nil {
				return nil, err
			}
			return in.Call(ctx, jsonObj, "stringify", a)
		}, want: `["a","b"]`},
		{name: "OKArrayOf", call: func() (jshost.Value, error) {
			a, err := in.Call(ctx, in.Global("Array"), "of", 1, "x", true)
			if err != nil {
				return nil, err
			}
			return in.Call(ctx, jsonObj, "stringify", a)
		}, want: `[1,"x",true]`},
		{name: "OKObjectKeys", call: func() (jshost.Value, error) {
			o, _ := in.Call(ctx, jsonObj, "parse", `{"b":1,"a":2}`)
			k, err := in.Call(ctx, in.Global("Object"), "keys", o)
			return fmt.Sprint(in.Export(k)), err
		}, want: "[b a]"},
		{name: "OKReflectGetIndex", call: func() (jshost.Value, error) {
			return in.Call(ctx, in.Global("Reflect"), "get", []any{"x", "y"}, 1)
		}, want: "y"},
		{name: "ErrReflectGetPrimitive", call: func() (jshost.Value, error) {
			return in.Call(ctx, in.Global("Reflect"), "get", "str", "length")
		}, errStr: "TypeError"},
		{name: "OKStringOfNull", call: func() (jshost.Value, error) {
			return in.Invoke(ctx, in.Global("String"), nil)
		}, want: "null"},
		{name: "OKArrayIsArray", call: func() (jshost.Value, error) {
			return in.Call(ctx, in.Global("Array"), "isArray", []any{1})
		}, want: "true"},
		{name: "OKErrorToString", call: func() (jshost.Value, error) {
			e, _ := in.New(ctx, in.Global("TypeError"), "bad thing")
			return in.Call(ctx, e, "toString")
		}, want: "TypeError: bad thing"},
		{name: "ErrNewArrayHuge", call: func() (jshost.Value, error) {
			return in.New(ctx, in.Global("Array"), 1e12)
		}, errStr: "RangeError"},
		{name: "ErrNewNotConstructor", call: func() (jshost.Value, error) {
			return in.New(ctx, in.Global("JSON"))
		}, errStr: "TypeError"},
		{name: "ErrPromiseWithoutExecutor", call: func() (jshost.Value, error) {
			return in.New(ctx, in.Global("Promise"), 3)
		}, errStr: "TypeError"},
		{name: "OKConsoleLog", call: func() (jshost.Value, error) {
			_, err := in.Call(ctx, in.Global("console"), "log", "logged", 1, true, nil)
			return in.Stdout()[len("serving\n"):], err
		}, want: "logged 1 true null\n"},
		{name: "OKDate", call: func() (jshost.Value, error) {
			d, _ := in.New(ctx, in.Global("Date"), 0)
			return in.Call(ctx, d, "toISOString")
		}, want: "1970-01-01T00:00:00.000Z"},
		{name: "OKUint8ArraySubarray", call: func() (jshost.Value, error) {
			u, _ := in.New(ctx, in.Global("Uint8Array"), []any{1, 2, 3, 4})
			s, err := in.Call(ctx, u, "subarray", 1, -1)
			return fmt.Sprint(in.Export(s)), err
		}, want: "[2 3]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if tt.errStr != "" {
				var ex *jshost.Exception
				if !errors.As(err, &ex) || ex.Name != tt.errStr {
					t.Fatalf("got %v, %v; want a thrown %s", got, err, tt.errStr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != tt.want {
				t.Fatalf("got %v, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// Ensure ToJS refuses what it cannot convert and converts the table.
func TestToJS(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
		err  bool
	}{
		{name: "OKNested", in: map[string][]int{"a": {1, 2}}, want: "map[a:[1 2]]"},
		{name: "OKTypedString", in: []string{"x"}, want: "[x]"},
		{name: "OKUint8", in: uint8(7), want: "7"},
		{name: "OKError", in: errors.New("e"), want: "map[message:e name:Error]"},
		{name: "ErrStruct", in: struct{ A int }{1}, err: true},
		{name: "ErrIntKeys", in: map[int]string{1: "a"}, err: true},
		{name: "ErrCycle", in: cyclic(), err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jshost.ToJS(tt.in)
			if tt.err {
				if err == nil {
					t.Fatalf("ToJS(%T) = %v, want an error", tt.in, v)
				}
				return
			}
			if err != nil || fmt.Sprint(jshost.Export(v)) != tt.want {
				t.Fatalf("ToJS = %v, %v; want %s", jshost.Export(v), err, tt.want)
			}
		})
	}
}

func cyclic() any {
	m := map[string]any{}
	m["self"] = m
	return m
}
