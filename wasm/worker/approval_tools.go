package main

import (
	"strconv"
	"sync"

	"github.com/agentrt/agentrt/core"
)

// The test tools. With the fault switch on (EnvTestFaults) the worker's
// runtime has the tools of the contract corpus's approval cases, so that
// tests can pause and resume runs on workerd
// (docs/adr/0019-tool-approvals.md): "pay" needs approval and answers
// "paid", "look" needs none and answers "looked", and "count" needs
// approval and answers "run N", N its runs in this Go instance, which
// shows a resume ran it exactly once; armed by FaultHeader "tool-exit",
// "count" ends the instance before it counts (crashIfArmed). A
// deployment declares its own tools in Go the same way, through
// config.Tools.

// testTools returns the test tools, with their own run counter.
func testTools() []core.Tool {
	yes := func(core.ToolInvocation) (bool, error) { return true, nil }
	answer := func(s string) func(core.Context, core.ToolInvocation) (string, error) {
		return func(core.Context, core.ToolInvocation) (string, error) { return s, nil }
	}
	var mu sync.Mutex
	runs := 0
	count := func(core.Context, core.ToolInvocation) (string, error) {
		crashIfArmed()
		mu.Lock()
		defer mu.Unlock()
		runs++
		return "run " + strconv.Itoa(runs), nil
	}
	return []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: yes, Call: answer("paid")},
		{ToolSpec: core.ToolSpec{Name: "look"}, Call: answer("looked")},
		{ToolSpec: core.ToolSpec{Name: "count"}, NeedsApproval: yes, Call: count},
	}
}
