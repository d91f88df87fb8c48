package main

import (
	"errors"
	"strconv"
	"sync"

	"github.com/agentrt/agentrt/core"
)

// The test counter. With the fault switch on (EnvTestFaults) and
// EnvTestCounter set to "bytes", the worker's runtime counts tokens with
// a testCounter instead of core's estimate, so that tests on workerd can
// see the Worker's counter at work (docs/adr/0018-context-window-by-tokens.md):
// its figures are a message's bytes, unlike the estimate's, and it fails
// on the inputs CountFailError and CountFailNegative. The tool "counted"
// answers "counted N", N the counter's calls so far in this Go instance,
// which shows the counts are cached. A deployment passes its own
// tokenizer in Go the same way, through config.CountTokens.
const (
	// CountFailError is the content the test counter fails with an error.
	CountFailError = "count: fail"
	// CountFailNegative is the content the test counter counts -1.
	CountFailNegative = "count: negative"
)

// testCounter counts a message's bytes (its content, its tool_call_id
// and each tool call's id, name and arguments: what core.EstimateTokens
// divides by 4) and its own calls.
type testCounter struct {
	mu    sync.Mutex
	calls int
}

// count is the counter, a core.TokenCounter.
func (c *testCounter) count(m core.Message) (int, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	switch m.Content {
	case CountFailError:
		return 0, errors.New("the test counter failed")
	case CountFailNegative:
		return -1, nil
	}
	n := len(m.Content) + len(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return n, nil
}

// tool returns the tool "counted", which answers "counted N", N the
// counter's calls so far.
func (c *testCounter) tool() core.Tool {
	return core.Tool{ToolSpec: core.ToolSpec{Name: "counted"}, Call: func(core.Context, core.ToolInvocation) (string, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return "counted " + strconv.Itoa(c.calls), nil
	}}
}
