package build

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure a root without the Wizer binary is reported as missing, not as
// a failed run, and writes nothing.
func TestPreinitialize_ErrMissing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.wasm")
	err := Preinitialize(context.Background(), dir, filepath.Join(dir, "in.wasm"), out)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want an error wrapping os.ErrNotExist", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s was written", out)
	}
}

func TestWithoutWizer(t *testing.T) {
	plainBytes := []byte("\x00asm plain build")
	for _, tc := range []struct {
		name string
		ci   string
	}{{"OK", ""}, {"ErrCI", "true"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			dir := t.TempDir()
			plain, out := filepath.Join(dir, WasiPlainModuleName), filepath.Join(dir, WasiModuleName)
			if err := os.WriteFile(plain, plainBytes, 0o644); err != nil {
				t.Fatal(err)
			}
			var warn bytes.Buffer
			err := withoutWizer(plain, out, &warn)
			if tc.ci != "" {
				// Ensure CI fails, says what to run, and writes no module.
				if !errors.Is(err, ErrNoWizer) || !strings.Contains(err.Error(), "npm ci") {
					t.Fatalf("got %v, want ErrNoWizer naming npm ci", err)
				}
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s was written under CI", out)
				}
				return
			}
			// Ensure elsewhere the plain build is copied and a warning names the fix.
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil || !bytes.Equal(got, plainBytes) {
				t.Fatalf("got %q, %v, want a copy of the plain build", got, err)
			}
			if !strings.Contains(warn.String(), "npm ci") || !strings.Contains(warn.String(), WasiModuleName) {
				t.Fatalf("warning %q names neither npm ci nor the module", warn.String())
			}
		})
	}
}
