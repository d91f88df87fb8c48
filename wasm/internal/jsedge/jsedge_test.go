//go:build !(js && wasm)

package jsedge

import (
	"strings"
	"testing"

	"github.com/agentrt/agentrt/wasm/internal/hostturn"
)

func TestErrNotJS_SaysWhatToDo(t *testing.T) {
	// Ensure the native stub explains how to get the edge instead.
	for _, want := range []string{"GOOS=js", "go run ./cmd/agentrt build", "core"} {
		if !strings.Contains(ErrNotJS.Error(), want) {
			t.Errorf("ErrNotJS = %q, want it to mention %q", ErrNotJS, want)
		}
	}
}

func TestNames_Distinct(t *testing.T) {
	// Ensure the Runtime's method names, its own and the table
	// operations', are distinct and non-empty, so no method silently
	// replaces another on the JavaScript object.
	methods := []string{MethodStartRun, MethodStartRunWithPolicy, MethodStartRunWithHistory,
		MethodStartRunWithPolicyAndHistory, MethodGetSession,
		MethodListSessions, MethodStats, MethodCheckHistory, MethodClose}
	for _, op := range hostturn.Ops {
		methods = append(methods, op.Name)
	}
	seen := map[string]bool{}
	for _, m := range methods {
		if m == "" || seen[m] {
			t.Errorf("method name %q is empty or repeated", m)
		}
		seen[m] = true
	}
}
