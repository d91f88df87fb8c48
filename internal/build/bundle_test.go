package build

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Ensure only the entry points are kept out of the bundle's modules.
func TestInternalModules(t *testing.T) {
	root := t.TempDir()
	js := filepath.Join(root, "js")
	if err := os.MkdirAll(js, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"glue.js", "glue.d.ts", "openai.js", "openai.d.ts", "wire.js", "pack.js", "package.json", "glue.test.js"} {
		if err := os.WriteFile(filepath.Join(js, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := InternalModules(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pack.js", "wire.js"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestBundleGlue_NoEsbuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		ci   string
	}{{"OK", ""}, {"ErrCI", "true"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			root, dir := t.TempDir(), t.TempDir()
			copied := filepath.Join(dir, "wire.js")
			if err := os.WriteFile(copied, []byte("export {};\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var warn bytes.Buffer
			bundled, err := BundleGlue(context.Background(), root, dir, &warn)
			if bundled {
				t.Fatal("reported bundled without esbuild")
			}
			// Ensure the copied modules are left as they are either way.
			if _, serr := os.Stat(copied); serr != nil {
				t.Fatalf("the copied module is gone: %v", serr)
			}
			if tc.ci != "" {
				// Ensure CI fails and says what to run.
				if !errors.Is(err, ErrNoEsbuild) || !strings.Contains(err.Error(), "npm ci") {
					t.Fatalf("got %v, want ErrNoEsbuild naming npm ci", err)
				}
				return
			}
			// Ensure elsewhere the build goes on with a warning naming the fix.
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(warn.String(), "npm ci") || !strings.Contains(warn.String(), "unbundled") {
				t.Fatalf("warning %q does not say what happened and what to run", warn.String())
			}
		})
	}
}

// relativeImport matches an import or export of a relative module: a
// static one (import/export ... from "./x.js") or a dynamic one.
var relativeImport = regexp.MustCompile(`(?:from\s*|import\s*\(\s*|import\s+)"(\.[^"]*)"`)

// Ensure the repository's glue bundles into one module that imports only
// wasm_exec.js, that the internal modules are removed and the entries
// kept, and that it exports what js/glue.js exports.
func TestBundleGlue_Repository(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, EsbuildBin)); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing under CI", EsbuildBin)
		}
		t.Skipf("%s is missing: run npm ci", EsbuildBin)
	}
	dir := t.TempDir()
	names, err := PackageSources(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := copyFile(filepath.Join(root, "js", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	bundled, err := BundleGlue(context.Background(), root, dir, nil)
	if err != nil || !bundled {
		t.Fatalf("BundleGlue: %v, %v", bundled, err)
	}
	internal, err := InternalModules(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(internal) < 5 {
		t.Fatalf("internal modules %v: want the glue's dozen", internal)
	}
	for _, name := range internal {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still in the package", name)
		}
	}
	for _, name := range append([]string{"glue.d.ts", "openai.d.ts", "package.json"}, Entries...) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s is missing: %v", name, err)
		}
	}
	glue, err := os.ReadFile(filepath.Join(dir, "glue.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range relativeImport.FindAllStringSubmatch(string(glue), -1) {
		if m[1] != "./wasm_exec.js" {
			t.Errorf("the bundle imports %s", m[1])
		}
	}
	// wasm_exec.js stays a file of its own, imported only when needed.
	if !strings.Contains(string(glue), `import("./wasm_exec.js")`) {
		t.Error("the bundle does not import ./wasm_exec.js at run time")
	}
	// The packaged module is found next to the bundle, by a literal that
	// bundlers downstream rewrite.
	if !strings.Contains(string(glue), `new URL("./agentrt.wasm", import.meta.url)`) {
		t.Error("the bundle lost new URL(\"./agentrt.wasm\", import.meta.url)")
	}
	// Worker mode's entry is found next to the bundle the same way, and
	// imports the glue only through the bundle.
	if !strings.Contains(string(glue), `new URL("./worker.js", import.meta.url)`) {
		t.Error("the bundle lost new URL(\"./worker.js\", import.meta.url)")
	}
	worker, err := os.ReadFile(filepath.Join(dir, "worker.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range relativeImport.FindAllStringSubmatch(string(worker), -1) {
		if m[1] != "./glue.js" {
			t.Errorf("worker.js imports %s", m[1])
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	exports := func(file string) string {
		t.Helper()
		out, err := exec.Command(node, "--input-type=module", "-e",
			`const m = await import(process.argv[1]); console.log(Object.keys(m).sort().join(" "))`,
			"file://"+filepath.ToSlash(file)).CombinedOutput()
		if err != nil {
			t.Fatalf("import %s: %v\n%s", file, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	want := exports(filepath.Join(root, "js", "glue.js"))
	if got := exports(filepath.Join(dir, "glue.js")); got != want || want == "" {
		t.Fatalf("the bundle exports %q, js/glue.js %q", got, want)
	}
	// openai.js imports the bundle and shares its AgentrtError.
	if got := exports(filepath.Join(dir, "openai.js")); got == "" {
		t.Fatal("openai.js exports nothing next to the bundle")
	}
}
