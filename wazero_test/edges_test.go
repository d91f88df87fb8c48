package wazero_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/jshost"
)

// The edge table (testdata/edges/) through the module's syscall/js API:
// each policy, parsed by JSON.parse in the instance, is passed to
// startRunWithPolicy, and each limits object and config (its tools given
// a call function) to createRuntime; the code
// is the one every other edge gives, and the instance keeps serving.
func TestEdges_SyscallJS(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	rt := mustRuntime(t, in, "agentrt", nil)
	parse := func(t *testing.T, raw []byte) jshost.Value {
		v, err := in.Call(ctx, in.Global("JSON"), "parse", string(raw))
		if err != nil {
			t.Fatalf("JSON.parse(%s): %v", raw, err)
		}
		return v
	}
	for _, c := range contract.MustLoadEdges(t, "policy") {
		t.Run(c.Name, func(t *testing.T) {
			v, err := in.CallAsync(ctx, rt, "startRunWithPolicy", "edges", "hi", parse(t, c.Policy))
			var ex *jshost.Exception
			switch {
			case err == nil:
				if s := get(in.Export(v), "status"); s != "completed" {
					t.Fatalf("run status %v", s)
				}
				c.CheckCode(t, "", "")
			case errors.As(err, &ex):
				c.CheckCode(t, ex.Code, ex.Message)
			default:
				t.Fatal(err)
			}
		})
	}
	for _, c := range contract.MustLoadEdges(t, "limits") {
		t.Run(c.Name, func(t *testing.T) {
			cfg, err := in.Call(ctx, in.Global("JSON"), "parse", `{"limits":`+string(c.Limits)+`}`)
			if err != nil {
				t.Fatal(err)
			}
			v, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", cfg)
			if err != nil {
				t.Fatalf("createRuntime threw %v; want it to return an Error or a Runtime", err)
			}
			if in.Get(v, "startRun") != jshost.Undefined {
				c.CheckCode(t, "", "")
				mustServe(t, in, v, "limits")
				return
			}
			e, _ := in.Export(v).(map[string]any)
			code, _ := e["code"].(string)
			msg, _ := e["message"].(string)
			c.CheckCode(t, code, msg)
		})
	}
	fn := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return "ok", nil })
	for _, c := range contract.MustLoadEdges(t, "config") {
		t.Run(c.Name, func(t *testing.T) {
			cfg := parse(t, c.Config)
			// JSON has no functions: each tool that is an object gets a call.
			var plain map[string]any
			if err := json.Unmarshal(c.Config, &plain); err != nil {
				t.Fatal(err)
			}
			if tools, ok := plain["tools"].([]any); ok {
				for i, tool := range tools {
					if _, ok := tool.(map[string]any); ok {
						if err := in.Set(in.Get(cfg, "tools", strconv.Itoa(i)), "call", fn); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			v, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", cfg)
			if err != nil {
				t.Fatalf("createRuntime threw %v; want it to return an Error or a Runtime", err)
			}
			if in.Get(v, "startRun") != jshost.Undefined {
				c.CheckCode(t, "", "")
				mustServe(t, in, v, "config")
				return
			}
			e, _ := in.Export(v).(map[string]any)
			code, _ := e["code"].(string)
			msg, _ := e["message"].(string)
			c.CheckCode(t, code, msg)
		})
	}
	mustServe(t, in, rt, "after")
}
