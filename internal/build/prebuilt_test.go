package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes each name with its text into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Ensure the tests take the modules of $AGENTRT_DIST as they are, with no
// build: the paths point into it (root is no repository, so a build
// would fail), and the WASI module is the snapshot exactly when it
// differs from the plain build.
func TestTestModules_FromDist(t *testing.T) {
	dist := t.TempDir()
	writeFiles(t, dist, map[string]string{"agentrt.wasm": "js", WasiModuleName: "snapshot", WasiPlainModuleName: "plain"})
	t.Setenv(DistEnv, dist)
	noRoot, scratch := t.TempDir(), t.TempDir()
	ctx := context.Background()

	js, err := TestModule(ctx, noRoot, scratch)
	if err != nil || js != filepath.Join(dist, "agentrt.wasm") {
		t.Fatalf("TestModule = %q, %v; want %s/agentrt.wasm", js, err, dist)
	}
	w, err := TestWasiModules(ctx, noRoot, scratch, nil)
	want := WasiBuilds{Module: filepath.Join(dist, WasiModuleName), Plain: filepath.Join(dist, WasiPlainModuleName), Snapshot: true}
	if err != nil || w != want {
		t.Fatalf("TestWasiModules = %+v, %v; want %+v", w, err, want)
	}
	if entries, _ := os.ReadDir(scratch); len(entries) != 0 {
		t.Fatalf("wrote %d files into the test's dir, want none", len(entries))
	}

	// Without Wizer, agentrt build writes the plain build under both names.
	writeFiles(t, dist, map[string]string{WasiModuleName: "plain"})
	if w, err = TestWasiModules(ctx, noRoot, scratch, nil); err != nil || w.Snapshot {
		t.Fatalf("TestWasiModules of two equal builds = %+v, %v; want no snapshot", w, err)
	}
}

// Ensure a $AGENTRT_DIST without a module fails naming the file, the
// variable and how to build it, rather than building or loading another.
func TestTestModules_DistMissingModule(t *testing.T) {
	dist := t.TempDir()
	writeFiles(t, dist, map[string]string{WasiModuleName: "snapshot"})
	t.Setenv(DistEnv, dist)
	ctx := context.Background()
	if p, err := TestModule(ctx, t.TempDir(), t.TempDir()); err == nil {
		t.Fatalf("TestModule = %q, want an error", p)
	} else if msg := err.Error(); !strings.Contains(msg, "agentrt.wasm") || !strings.Contains(msg, DistEnv) || !strings.Contains(msg, "agentrt build") {
		t.Fatalf("error %q does not name the module, %s and the build", msg, DistEnv)
	}
	if _, err := TestWasiModules(ctx, t.TempDir(), t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), WasiPlainModuleName) {
		t.Fatalf("TestWasiModules without the plain build: %v, want an error naming %s", err, WasiPlainModuleName)
	}
}

// Ensure Prebuilt is "" when the variable is unset or empty (the tests
// then build their modules) and an absolute path otherwise.
func TestPrebuilt(t *testing.T) {
	t.Setenv(DistEnv, "")
	if got := Prebuilt(); got != "" {
		t.Fatalf("Prebuilt with %s empty = %q, want \"\"", DistEnv, got)
	}
	t.Setenv(DistEnv, "dist")
	if got := Prebuilt(); !filepath.IsAbs(got) || filepath.Base(got) != "dist" {
		t.Fatalf("Prebuilt with %s=dist = %q, want an absolute path ending in dist", DistEnv, got)
	}
}
