package hostmsg_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/wire"
)

// FuzzMessages reads any JSON as a history. Whatever the input, Messages
// returns messages or a typed error with an index inside the array, never
// panics; accepted messages survive the packed format unchanged, and
// core validates them without panicking, naming a host message.
func FuzzMessages(f *testing.F) {
	for _, c := range mustCorpus(f) {
		f.Add([]byte(c.History))
	}
	f.Add([]byte(`[{"role":"assistant","parts":[{"type":"tool-x","toolCallId":"a","state":"output-available","output":[1]},{"type":"text","text":"t"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := hostjson.Parse(data)
		if err != nil {
			return
		}
		h, err := hostmsg.Messages(v, 64)
		if err != nil {
			e, ok := err.(*core.Error)
			if !ok {
				t.Fatalf("error %T %v, want *core.Error", err, err)
			}
			switch e.Code {
			case core.CodeInvalidArgument:
				if v.Kind() == hostmsg.Array {
					t.Fatalf("an array refused as %v", e)
				}
			case core.CodeInvalidHistory:
				if e.Index < 0 || e.Index >= v.Len() || e.Message == "" {
					t.Fatalf("index %d of %d messages: %v", e.Index, v.Len(), e)
				}
			case core.CodeLimitExceeded:
				if v.Len() <= 64 {
					t.Fatalf("%d messages refused as %v", v.Len(), e)
				}
			default:
				t.Fatalf("unexpected code: %v", e)
			}
			return
		}
		hosts := 0
		for i := range h {
			if !h[i].Continues {
				hosts++
			}
		}
		if hosts != v.Len() || (len(h) > 0 && h[0].Continues) {
			t.Fatalf("%d messages from %d host messages, %d not continuing", len(h), v.Len(), hosts)
		}
		// Strings from JSON are valid UTF-8 (hostjson replaces bad
		// bytes), so the packed format takes them all.
		back, err := wire.DecodeHistoryBytes(wire.EncodeHistory(h), 1<<20)
		if err != nil {
			t.Fatalf("packed round trip: %v", err)
		}
		for i := range h {
			if h[i].ToolCalls != nil && len(h[i].ToolCalls) == 0 {
				back[i].ToolCalls = h[i].ToolCalls
			}
		}
		if !reflect.DeepEqual(back, h) {
			t.Fatalf("packed round trip changed the history\n got %+v\nwant %+v", back, h)
		}
		if err := core.ValidateHistory(h, core.Limits{MaxSeedMessages: 1 << 20}); err != nil {
			e := err.(*core.Error)
			if e.Index < 0 || e.Index >= v.Len() {
				t.Fatalf("validation names index %d of %d host messages: %v", e.Index, v.Len(), e)
			}
		}
	})
}

// Ensure hostjson's JSON text is JSON that reads back to the same text.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"b":1,"a":[true,null,"x\n\u0001é"],"o":{},"n":-1.5e3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := hostjson.Parse(data)
		if err != nil {
			return
		}
		s, ok := v.JSON()
		if !ok {
			t.Fatal("a parsed value has no JSON text")
		}
		if !json.Valid([]byte(s)) {
			t.Fatalf("JSON() = %q is not JSON", s)
		}
		w, err := hostjson.Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if s2, _ := w.JSON(); s2 != s {
			t.Fatalf("not stable: %q then %q", s, s2)
		}
	})
}

func mustCorpus(f *testing.F) []contract.Case {
	if _, err := os.Stat(filepath.Join(contract.Dir(), "own.json")); err != nil {
		f.Fatal(err)
	}
	cs, err := contract.Load()
	if err != nil {
		f.Fatal(err)
	}
	return cs
}
