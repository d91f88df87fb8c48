package wasihost

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure Tag sets and reads a session's tag through the op export, on
// both modules.
func TestRuntime_Tag(t *testing.T) {
	for _, m := range modules {
		t.Run(m.name, func(t *testing.T) {
			rt := mustRuntime(t, m.start(t), Config{Model: core.Echo{}})
			if _, ok, err := rt.Tag("s", nil); ok || err != nil {
				t.Fatalf("Tag of no session = %v, %v", ok, err)
			}
			if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "x"}); err != nil {
				t.Fatal(err)
			}
			v := "blué"
			if tag, ok, err := rt.Tag("s", &v); !ok || err != nil || tag != v {
				t.Fatalf("Tag(set) = %q, %v, %v", tag, ok, err)
			}
			if tag, ok, err := rt.Tag("s", nil); !ok || err != nil || tag != v {
				t.Fatalf("Tag after set = %q, %v, %v", tag, ok, err)
			}
		})
	}
}
