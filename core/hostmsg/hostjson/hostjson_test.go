package hostjson_test

import (
	"strconv"
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
		// Ensure the same holds for objects large enough to be indexed,
		// for keys repeated before and after the index is built.
		{name: "OKDuplicateManyKeys", in: manyKeys(40, `,"k3":"x","k39":"y","k0":"z"`),
			json: strings.Replace(strings.Replace(strings.Replace(manyKeys(40, ""), `"k0":0`, `"k0":"z"`, 1), `"k3":3`, `"k3":"x"`, 1), `"k39":39`, `"k39":"y"`, 1),
			kind: hostmsg.Object},
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

// manyKeys returns an object of n keys "k0":0 ... and then tail.
func manyKeys(n int, tail string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	b.WriteString(tail + "}")
	return b.String()
}

func TestValue_Get_ManyKeys(t *testing.T) {
	// Ensure every field of an indexed object is found, and an absent one
	// is not.
	v, err := hostjson.Parse([]byte(manyKeys(100, "")))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if got, _ := v.Get("k" + strconv.Itoa(i)).JSON(); got != strconv.Itoa(i) {
			t.Errorf("k%d = %s, want %d", i, got, i)
		}
	}
	if k := v.Get("k100").Kind(); k != hostmsg.Undefined {
		t.Errorf("absent field kind %v", k)
	}
}

// BenchmarkParse_Keys parses one object of 1,000 and of 32,000 keys and
// reports the cost per key: about the same for both when parsing is
// linear in the number of keys.
func BenchmarkParse_Keys(b *testing.B) {
	for _, n := range []int{1000, 32000} {
		in := []byte(manyKeys(n, ""))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := hostjson.Parse(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
