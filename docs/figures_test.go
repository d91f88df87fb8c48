package docs_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/internal/build"
)

// figureTolerance is how far a size the docs state may be from the built
// module's: other changes move the size a little; a figure further off
// is stale.
const figureTolerance = 0.05

// builtDist returns a dist/ directory holding the modules as
// `agentrt build` writes them: $AGENTRT_DIST's or the repository's dist/
// when it holds them, else one built into a temp dir. Without a go toolchain, or
// without Wizer (the WASI module is then not pre-initialized), the test
// skips, or fails under CI.
func builtDist(t *testing.T, root string) string {
	t.Helper()
	dir := build.Prebuilt()
	if dir == "" {
		dir = filepath.Join(root, "dist")
	}
	if !isBuilt(dir) {
		if _, err := exec.LookPath("go"); err != nil {
			skipOrFail(t, "go toolchain not found: cannot build dist/")
		}
		dir = t.TempDir()
		d, err := build.Build(context.Background(), root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !d.WasiSnapshot {
			skipOrFail(t, "Wizer is not installed (npm ci): the WASI module is not pre-initialized")
		}
	}
	return dir
}

// isBuilt reports whether dir holds the modules, the WASI one
// pre-initialized (a plain build written under both names has the same
// size twice).
func isBuilt(dir string) bool {
	snap, err1 := os.Stat(filepath.Join(dir, build.WasiModuleName))
	plain, err2 := os.Stat(filepath.Join(dir, build.WasiPlainModuleName))
	_, err3 := os.Stat(filepath.Join(dir, "agentrt.wasm"))
	return err1 == nil && err2 == nil && err3 == nil && snap.Size() != plain.Size()
}

func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func sizeOf(t *testing.T, path string) build.Size {
	t.Helper()
	s, err := build.SizeOf(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// number reads a figure as the docs write it: "2,732,020" or "2.61".
func number(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// near checks that the figure a doc states for what is within tol
// (relative) of got.
func near(t *testing.T, doc, what string, stated, got, tol float64) {
	t.Helper()
	if math.Abs(stated-got) > tol*got {
		t.Errorf("%s says %s is %g; the build gives %g (more than %g%% off): update the figure", doc, what, stated, got, tol*100)
	}
}

// find returns the submatches of re in the file doc (relative to root),
// failing when the sentence is not there.
func find(t *testing.T, root, doc string, re *regexp.Regexp) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	m := re.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("%s no longer has the sentence %s: keep this test in step with it", doc, re)
	}
	return m
}

// Ensure the module sizes docs/wasi.md and docs/package.md state are
// those of the modules the build writes, within figureTolerance.
func TestFigures_ModuleSizes(t *testing.T) {
	root := repoRoot(t)
	dist := builtDist(t, root)
	js := sizeOf(t, filepath.Join(dist, "agentrt.wasm"))
	snap := sizeOf(t, filepath.Join(dist, build.WasiModuleName))
	plain := sizeOf(t, filepath.Join(dist, build.WasiPlainModuleName))
	t.Logf("agentrt.wasm %d raw %d gzip; %s %d raw %d gzip; %s %d raw", js.Raw, js.Gzip, build.WasiModuleName, snap.Raw, snap.Gzip, build.WasiPlainModuleName, plain.Raw)

	m := find(t, root, "docs/wasi.md", regexp.MustCompile("`agentrt-wasi.wasm`, the pre-initialized build, is ([0-9,]+) bytes raw\\s+and ([0-9,]+) gzip, ([0-9.]+)x the GOOS=js module's gzip size \\(the plain build\\s+is ([0-9,]+) raw"))
	near(t, "docs/wasi.md", "the snapshot's raw size", number(t, m[1]), float64(snap.Raw), figureTolerance)
	near(t, "docs/wasi.md", "the snapshot's gzip size", number(t, m[2]), float64(snap.Gzip), figureTolerance)
	if ratio := float64(snap.Gzip) / float64(js.Gzip); math.Abs(number(t, m[3])-ratio) > 0.03 {
		t.Errorf("docs/wasi.md says the snapshot is %sx the GOOS=js module's gzip size; the build gives %.2fx", m[3], ratio)
	}
	near(t, "docs/wasi.md", "the plain build's raw size", number(t, m[4]), float64(plain.Raw), figureTolerance)

	m = find(t, root, "docs/package.md", regexp.MustCompile("`agentrt.wasm` is ([0-9.]+) MB raw, ([0-9.]+) MB gzip"))
	near(t, "docs/package.md", "agentrt.wasm's raw size", number(t, m[1])*1e6, float64(js.Raw), figureTolerance)
	near(t, "docs/package.md", "agentrt.wasm's gzip size", number(t, m[2])*1e6, float64(js.Gzip), figureTolerance)
}
