package core_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure the npm package carries the version the module and the worker
// report.
func TestVersion_MatchesPackage(t *testing.T) {
	b, err := os.ReadFile("../js/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Version != core.Version {
		t.Fatalf("js/package.json version %q, core.Version %q", p.Version, core.Version)
	}
}
