package main

import (
	"context"
	"strings"
	"testing"
)

// Ensure -state without -durable is refused before anything is built.
func TestRunWorker_StateNeedsDurable(t *testing.T) {
	err := runWorker(context.Background(), []string{"-state", t.TempDir(), "-addr", "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "-durable") {
		t.Fatalf("got %v, want an error naming -durable", err)
	}
}
