package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPackageSources(t *testing.T) {
	root := t.TempDir()
	js := filepath.Join(root, "js")
	if err := os.MkdirAll(filepath.Join(js, "test"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"glue.js", "glue.d.ts", "openai.js", "openai.d.ts", "history.js", "package.json",
		"glue.test.js", "wire_test.js", "x.spec.js", "notes.md", "usage.ts", "test/env.mjs",
	} {
		if err := os.WriteFile(filepath.Join(js, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := PackageSources(root)
	if err != nil {
		t.Fatal(err)
	}
	// Ensure every module and type file ships, and no test, directory or other file.
	want := []string{"glue.d.ts", "glue.js", "history.js", "openai.d.ts", "openai.js", "package.json"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Ensure the repository's js/ ships the glue and every file it imports,
// the OpenAI model, their types and package.json.
func TestPackageSources_Repository(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	got, err := PackageSources(root)
	if err != nil {
		t.Fatal(err)
	}
	have := strings.Join(got, " ")
	for _, name := range []string{
		"glue.js", "errors.js", "load.js", "driver.js", "mirror.js", "quick.js", "request.js", "runtime.js", "wire.js", "history.js", "pack.js", "args.js", "tools.js",
		"glue.d.ts", "openai.js", "openai.d.ts", "package.json",
	} {
		if !strings.Contains(" "+have+" ", " "+name+" ") {
			t.Errorf("%s is not shipped: %v", name, got)
		}
	}
}

func TestPack(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npm not found")
		}
		t.Skip("npm not found")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"@scope/pkg-test","version":"1.2.3","files":["/*.js"]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "a.js"), []byte("export {};\n"), 0o644)
	dest := filepath.Join(t.TempDir(), "out")
	t.Setenv("npm_config_cache", filepath.Join(t.TempDir(), "cache"))
	got, err := Pack(context.Background(), dir, dest)
	if err != nil {
		t.Fatal(err)
	}
	// Ensure the tarball is where Pack says, named as npm names scoped packages.
	if want := filepath.Join(dest, "scope-pkg-test-1.2.3.tgz"); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if _, err := os.Stat(got); err != nil {
		t.Fatal(err)
	}
	// Ensure a directory that is not a package fails with npm's reason.
	if _, err := Pack(context.Background(), t.TempDir(), dest); err == nil || !strings.Contains(err.Error(), "npm pack") {
		t.Fatalf("Pack of an empty directory: got %v, want an npm pack error", err)
	}
}
