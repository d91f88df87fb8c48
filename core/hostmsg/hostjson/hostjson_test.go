package hostjson_test

import (
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, json string
		kind           hostmsg.Kind
		err            bool
	}{
		// Ensure fields keep their order and strings are escaped as
		// JSON.stringify escapes them.
		{name: "OK", in: ` {"b": 1, "a": [true, null, "x\u0041\n\u0001<é>"], "o": {}} `,
			json: `{"b":1,"a":[true,null,"xA\n\u0001<é>"],"o":{}}`, kind: hostmsg.Object},
		// Ensure a repeated field takes the last value at its first place.
		{name: "OKDuplicate", in: `{"a":1,"b":2,"a":3}`, json: `{"a":3,"b":2}`, kind: hostmsg.Object},
		// Ensure numbers are kept as written.
		{name: "OKNumber", in: `1.0e2`, json: `1.0e2`, kind: hostmsg.Number},
		{name: "ErrTrailing", in: `{} {}`, err: true},
		{name: "ErrSyntax", in: `{"a":}`, err: true},
		{name: "ErrEmpty", in: ``, err: true},
		{name: "ErrDeep", in: strings.Repeat("[", hostjson.MaxDepth+2) + strings.Repeat("]", hostjson.MaxDepth+2), err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := hostjson.Parse([]byte(tt.in))
			if tt.err {
				if err == nil {
					t.Fatalf("got %v, want an error", v.Kind())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind() != tt.kind {
				t.Errorf("kind %v, want %v", v.Kind(), tt.kind)
			}
			if got, _ := v.JSON(); got != tt.json {
				t.Errorf("JSON() = %s, want %s", got, tt.json)
			}
		})
	}
}

func TestValue_Access(t *testing.T) {
	v, err := hostjson.Parse([]byte(`{"s":"x","a":[1,"y"]}`))
	if err != nil {
		t.Fatal(err)
	}
	// Ensure absent fields and out-of-range elements are Undefined, and
	// accessors of the wrong kind answer zero values.
	if k := v.Get("nope").Kind(); k != hostmsg.Undefined {
		t.Errorf("absent field kind %v", k)
	}
	if a := v.Get("a"); a.Len() != 2 || a.Index(1).Text() != "y" || a.Index(2).Kind() != hostmsg.Undefined {
		t.Errorf("array access: len %d, [1] %q, [2] %v", a.Len(), a.Index(1).Text(), a.Index(2).Kind())
	}
	if s := v.Get("s"); s.Text() != "x" || s.Len() != 0 || s.Get("k").Kind() != hostmsg.Undefined {
		t.Errorf("string access: %q %d", s.Text(), s.Len())
	}
	if _, ok := (hostjson.Value{}).JSON(); ok {
		t.Error("the zero Value has JSON text")
	}
}
