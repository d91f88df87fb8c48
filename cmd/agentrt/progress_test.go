package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	// Ensure a step says what it starts, with the hint, and that it is done.
	var b bytes.Buffer
	if err := progress(&b, "compiling", "a minute", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || lines[0] != "compiling (a minute)..." || !strings.HasPrefix(lines[1], "compiling: done in ") {
		t.Fatalf("got %q", b.String())
	}
	// Ensure a failed step returns its error and claims nothing.
	b.Reset()
	want := errors.New("boom")
	if err := progress(&b, "compiling", "", func() error { return want }); err != want {
		t.Fatalf("got %v, want %v", err, want)
	}
	if strings.Contains(b.String(), "done") || b.String() != "compiling...\n" {
		t.Fatalf("got %q", b.String())
	}
}
