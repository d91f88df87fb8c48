package core_test

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure a session's tag is set and read back, "" until set, and goes
// with the session.
func TestRuntime_Tag(t *testing.T) {
	rt, err := core.New(core.Config{Model: core.Echo{}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, ok := rt.Tag("s", nil); ok {
		t.Fatal("a tag of no session")
	}
	if _, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", Input: "x"}); err != nil {
		t.Fatal(err)
	}
	v := "blue"
	if tag, ok := rt.Tag("s", nil); !ok || tag != "" {
		t.Fatalf("Tag before set = %q, %v", tag, ok)
	}
	if tag, ok := rt.Tag("s", &v); !ok || tag != "blue" {
		t.Fatalf("Tag(set) = %q, %v", tag, ok)
	}
	if tag, ok := rt.Tag("s", nil); !ok || tag != "blue" {
		t.Fatalf("Tag after set = %q, %v", tag, ok)
	}
	rt.DeleteSession("s")
	if _, ok := rt.Tag("s", nil); ok {
		t.Fatal("the tag outlived its session")
	}
}
