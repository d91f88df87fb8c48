// Package wazero_test runs the real agentrt module, built from the same
// code as dist/agentrt.wasm, under wazero with jshost: no JavaScript
// engine, no network. The tests drive it exactly as JavaScript would:
// they read globalThis.agentrt, call createRuntime, pass arrays of
// objects, and await Promises.
package wazero_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/jshost"
)

var (
	// module is wasm/runtime compiled once for the whole test binary:
	// dist/'s when $AGENTRT_DIST is set (make test), else built here.
	module *jshost.Module
	// modulePath is the .wasm, for the compile benchmarks.
	modulePath string
	// skipReason is why the module could not be built (no Go toolchain).
	skipReason string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	ctx := context.Background()
	if _, err := exec.LookPath("go"); err != nil {
		skipReason = "go toolchain not found: cannot build the module"
		return m.Run()
	}
	root, err := build.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "agentrt-wazero-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if modulePath, err = build.TestModule(ctx, root, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	start := time.Now()
	module, err = jshost.CompileFile(ctx, modulePath, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer module.Close(ctx)
	if testing.Verbose() {
		fmt.Printf("compiled %s in %v (cache %s)\n", filepath.Base(modulePath), time.Since(start).Round(time.Millisecond), jshost.DefaultCacheDir())
	}
	return m.Run()
}

// mustInstance starts a fresh instance of the module (a cold start) and
// closes it when the test ends. env may name the global (AGENTRT_GLOBAL).
func mustInstance(t testing.TB, env map[string]string) *jshost.Instance {
	t.Helper()
	if module == nil {
		if os.Getenv("CI") != "" {
			t.Fatal(skipReason)
		}
		t.Skip(skipReason)
	}
	in, err := jshost.NewInstance(context.Background(), module, jshost.Config{Env: env})
	if err != nil {
		t.Fatalf("NewInstance: %v", err)
	}
	t.Cleanup(func() {
		in.Close(context.Background())
	})
	return in
}

// mustRuntime calls createRuntime(config) on the instance's agentrt global.
func mustRuntime(t testing.TB, in *jshost.Instance, global string, config map[string]any) jshost.Value {
	t.Helper()
	api := in.Global(global)
	if api == jshost.Undefined {
		t.Fatalf("globalThis.%s is undefined; stderr: %s", global, in.Stderr())
	}
	rt, err := in.Call(context.Background(), api, "createRuntime", config)
	if err != nil {
		t.Fatalf("createRuntime: %v", err)
	}
	if in.Get(rt, "startRun") == jshost.Undefined {
		t.Fatalf("createRuntime returned %v, want a Runtime", in.Export(rt))
	}
	return rt
}

// result is the part of a Result the tests read.
type result struct {
	raw          map[string]any
	reply        string
	seedMode     string
	seeded       int
	skipped      int
	messageCount int
	appended     []any
}

func asResult(t testing.TB, in *jshost.Instance, v jshost.Value) result {
	t.Helper()
	m, ok := in.Export(v).(map[string]any)
	if !ok {
		t.Fatalf("result is %T, want an object", in.Export(v))
	}
	r := result{raw: m}
	r.reply, _ = get(m, "reply", "content").(string)
	r.seedMode, _ = get(m, "seed", "mode").(string)
	r.seeded = num(get(m, "seed", "seeded"))
	r.skipped = num(get(m, "seed", "skippedSystem"))
	r.messageCount = num(m["messageCount"])
	r.appended, _ = m["appended"].([]any)
	return r
}

func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// msg is one history message as a JavaScript object.
func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// history converts messages to the []any a JS array is made from.
func history(msgs ...map[string]any) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	return out
}
