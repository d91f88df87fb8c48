//go:build wasip1

package wasmexport

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// agentrt_create is linked by the WASI module only, for now: the GOOS=js
// module's glue creates its runtimes with createRuntime, and the export
// costs that module about 3.5 KB of gzip (the config frame's decoder),
// more than its size bar's margin until the second driver goes (ADR 0017,
// step 6).

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

// agentrt_create(n): the input holds a config frame. Returns the new
// runtime's number (0 or more), or minus the length of a refused frame
// that agentrt_out then points at.
//
//go:wasmexport agentrt_create
func exportCreate(size int32) (n int32) {
	defer func() {
		if recover() != nil {
			n = -Refuse(core.NewError(core.CodeInternal, failed))
		}
	}()
	frame, ok := Input(size)
	if !ok {
		return -Refuse(core.NewError(core.CodeInvalidArgument, tooLong))
	}
	c, err := wire.DecodeConfig(frame)
	if err != nil {
		return -Refuse(core.AsError(err))
	}
	cfg := core.Config{SystemPrompt: c.SystemPrompt, Limits: c.Limits, AfterFunc: AfterFunc}
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
		return -Refuse(core.AsError(err))
	}
	var native core.Model
	if c.Echo {
		native = core.Echo{}
	}
	n = Register(hostturn.New(rt, native))
	Answer(nil)
	return n
}
