package contract

import (
	"testing"

	"github.com/agentrt/agentrt/core"
)

// RunPolicyEdges runs every "policy" case Go's types hold (GoPolicy) as a
// subtest of t: run runs the input "hi" under the policy on the edge
// (core in process, wasihost) and returns its error, which must carry
// the case's code. It returns how many cases ran; the others the
// compiler refuses, and there is nothing to run.
func RunPolicyEdges(t *testing.T, run func(t testing.TB, p core.Policy) error) int {
	t.Helper()
	ran := 0
	for _, c := range MustLoadEdges(t, "policy") {
		p, ok := c.GoPolicy()
		if !ok {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			c.Check(t, run(t, p))
		})
	}
	return ran
}

// RunRuntimeEdges runs every "limits" and "config" case Go's types hold
// (GoLimits, GoConfig) as a subtest of t. newRuntime starts a runtime of
// the edge with cfg's limits, or with its system prompt and tools (each
// tool answers "ok"), and returns a run of the input "hi" on it and its
// close, or the error, which must carry the case's code; under valid
// limits the run completes. It returns how many cases ran.
func RunRuntimeEdges(t *testing.T, newRuntime func(cfg core.Config) (run func() error, close func(), err error)) int {
	t.Helper()
	ran := 0
	for _, c := range MustLoadEdges(t, "limits") {
		l, ok := c.GoLimits()
		if !ok {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			run, close, err := newRuntime(core.Config{Limits: l})
			c.Check(t, err)
			if err != nil {
				return
			}
			defer close()
			if err := run(); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, c := range MustLoadEdges(t, "config") {
		system, specs, ok := c.GoConfig()
		if !ok {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			cfg := core.Config{SystemPrompt: system}
			for _, s := range specs {
				cfg.Tools = append(cfg.Tools, core.Tool{ToolSpec: s, Call: func(core.Context, core.ToolInvocation) (string, error) { return "ok", nil }})
			}
			_, close, err := newRuntime(cfg)
			c.Check(t, err)
			if err == nil {
				close()
			}
		})
	}
	return ran
}

// RunApprovalEdges runs every "approvals" case Go's types hold
// (GoResume) as a subtest of t: newRun makes a fresh runtime of the edge
// whose tool "pay" asks approval of every call and returns a run of a
// request on it, whose error must carry the case's code (and index);
// without one the resume completes. It returns how many cases ran.
func RunApprovalEdges(t *testing.T, newRun func(t testing.TB) func(req core.RunRequest) error) int {
	t.Helper()
	ran := 0
	for _, c := range MustLoadEdges(t, "approvals") {
		req, ok, err := c.GoResume()
		if !ok {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			if err == nil {
				err = newRun(t)(req)
			}
			c.Check(t, err)
			if e := core.AsError(err); e != nil {
				c.CheckIndex(t, e.Index)
			}
		})
	}
	return ran
}
