//go:build wasip1

package wasmexport

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// The WASI module reads a binary config frame (wire.DecodeConfig,
// versions 1 and 2), as wasihost writes it.
func init() { NewDriver = configDriver }

// AfterFunc is the AfterFunc of the runtimes agentrt_create makes
// (core.Config.AfterFunc); nil is core's default, Go's timers. A module
// whose goroutines run only during export calls (a WASI reactor) sets it
// before its host calls agentrt_create.
var AfterFunc func(ms int64, f func()) (stop func())

// hostTool is the Call of every tool a config frame names: the module
// hands tool calls to the host in tool actions, so it is never called.
func hostTool(core.Context, core.ToolInvocation) (string, error) {
	return "", core.NewError(core.CodeToolError, "tools run in the host")
}

// always is the approval predicate of a tool whose every call needs
// approval (wire.ApprovalAlways).
func always(core.ToolInvocation) (bool, error) { return true, nil }

// configDriver makes the runtime of a binary config frame.
func configDriver(frame []byte) (*hostturn.Driver, error) {
	c, err := wire.DecodeConfig(frame)
	if err != nil {
		return nil, err
	}
	cfg := core.Config{SystemPrompt: c.SystemPrompt, Limits: c.Limits, AfterFunc: AfterFunc, CountByAction: c.CountByAction}
	for i, s := range c.Tools {
		t := core.Tool{ToolSpec: s, Call: hostTool}
		if i < len(c.Approval) {
			switch c.Approval[i] {
			case wire.ApprovalAlways:
				t.NeedsApproval = always
			case wire.ApprovalAsk:
				t.ApprovalByHost = true
			}
		}
		cfg.Tools = append(cfg.Tools, t)
	}
	rt, err := core.New(cfg)
	if err != nil {
		return nil, err
	}
	var native core.Model
	if c.Echo {
		native = core.Echo{}
	}
	return hostturn.New(rt, native, wire.ReadPolicyJSON), nil
}
