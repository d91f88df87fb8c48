package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentrt/agentrt/internal/build"
)

// The modules the size test builds beside the real one: the baseline (a
// main that sets one global) and core with the least JavaScript glue.
const (
	MinimalPkg  = "./wasm/runtime/testdata/minimal"
	CoreOnlyPkg = "./wasm/runtime/testdata/coreonly"
)

// maxGzipRatio guards the module's download size: its gzip size over that
// of the minimal syscall/js module built in the same run. The goal is
// 1.3. The bound is 1.37 while the module carries, next to everything it
// had at 1.300, the wire's control exports (ADR 0017 step 4, about 4.5
// KB, and about 1.9 KB more with agentrt_create reading a config's JSON
// text with createRuntime's reader, the budget in the stats frame and
// the Array bound of agentrt_check, the binary policy reader retired),
// the token window (ADR 0018, about 2.7 KB) and the host's count action
// (about 2.1 KB), tool approvals (ADR 0019: core's approval logic, the
// approval phase and its frames, about 10.9 KB), the one policy reader
// and the typed turn calls of step 6 (about 3.8 KB together), the
// edited-message rule, the healed copy and the UIMessage approval
// states, and the approvals of the syscall/js API (its adapter asks
// needsApproval, one reader of options.approvals and a history's
// decisions, the Result's pendingApprovals: about 3.6 KB); code written
// smaller took back part of it. runtime.ReadMemStats
// (stats().heapAlloc) alone costs about 4.7 KB. Where the room for 1.30
// is to come from is not found yet: the syscall/js adapter's conversions
// (internal/jsedge) written as text and crossed with one JSON.parse were
// measured and grew the module (docs/BENCHMARKS.md). The room is in the
// syscall/js API itself: the module measured 1.225x without it (its run
// methods alone are about 31 KB), and the glue no longer calls it (it
// creates, runs, checks and closes over the wire exports); the API stays
// as the module's documented JavaScript API (ADR 0017). Package time
// (and context, which imports it) alone would cost about 0.1 of the
// ratio, which is why core and the edge do without them. See
// docs/BENCHMARKS.md, "Module size".
const maxGzipRatio = 1.37

// TestModule_Size builds the module and the minimal module into a temp
// dir with the same flags, and reports raw and gzip sizes and ratios.
func TestModule_Size(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two wasm modules; skipped with -short")
	}
	root, err := build.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	sizes := map[string]build.Size{}
	for name, pkg := range map[string]string{"module": build.RuntimePkg, "minimal": MinimalPkg, "coreonly": CoreOnlyPkg} {
		out := filepath.Join(dir, name+".wasm")
		if err := build.Module(ctx, root, pkg, out); err != nil {
			t.Fatal(err)
		}
		if sizes[name], err = build.SizeOf(out); err != nil {
			t.Fatal(err)
		}
	}
	m, b := sizes["module"], sizes["minimal"]
	raw := float64(m.Raw) / float64(b.Raw)
	gz := float64(m.Gzip) / float64(b.Gzip)
	t.Logf("module  %d bytes raw, %d bytes gzip", m.Raw, m.Gzip)
	t.Logf("minimal %d bytes raw, %d bytes gzip", b.Raw, b.Gzip)
	c := sizes["coreonly"]
	t.Logf("core    %d bytes raw, %d bytes gzip (core with the least glue)", c.Raw, c.Gzip)
	t.Logf("ratio   %.3f raw, %.3f gzip (goal 1.3, bound %.2f gzip); core alone %.3f raw, %.3f gzip",
		raw, gz, maxGzipRatio, float64(c.Raw)/float64(b.Raw), float64(c.Gzip)/float64(b.Gzip))
	if gz > maxGzipRatio {
		t.Errorf("module gzip size is %.3fx the minimal module's, more than %.2fx: something heavy was linked in (check GOOS=js GOARCH=wasm go list -deps ./wasm/runtime for fmt, encoding/json, reflect)", gz, maxGzipRatio)
	}
}

// TestModule_Deps ensures the module links none of the heavy packages the
// size budget rules out.
func TestModule_Deps(t *testing.T) {
	deps := goListDeps(t)
	for _, bad := range []string{"fmt", "encoding/json", "reflect", "os", "strconv", "math/big", "regexp", "net/http", "runtime/debug", "time", "context", "errors", "syscall"} {
		if deps[bad] {
			t.Errorf("the module imports %s", bad)
		}
	}
	for _, want := range []string{"syscall/js", "github.com/agentrt/agentrt/core", "github.com/agentrt/agentrt/internal/jsedge", "github.com/agentrt/agentrt/wire"} {
		if !deps[want] {
			t.Errorf("the module does not import %s", want)
		}
	}
}

func goListDeps(t *testing.T) map[string]bool {
	t.Helper()
	root, err := build.Root()
	if err != nil {
		t.Fatal(err)
	}
	out, err := goCommand(root, "list", "-tags="+build.Tags(build.RuntimePkg), "-deps", build.RuntimePkg)
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string]bool{}
	start := 0
	for i := 0; i <= len(out); i++ {
		if i == len(out) || out[i] == '\n' {
			if i > start {
				deps[string(out[start:i])] = true
			}
			start = i + 1
		}
	}
	return deps
}
