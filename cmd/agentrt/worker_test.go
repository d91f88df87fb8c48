package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Ensure -state without -durable is a usage error (exit code 2, as
// docs/cli.md says), refused before anything is built.
func TestRunWorker_StateNeedsDurable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"worker", "-state", t.TempDir(), "-addr", "127.0.0.1:0"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "-state needs -durable") || !strings.Contains(stderr.String(), "Usage of worker") {
		t.Fatalf("exit %d, stderr %q; want 2, the reason and the usage", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Fatalf("stdout %q, want nothing", stdout.String())
	}
}
