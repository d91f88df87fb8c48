//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wasm/internal/jsedge"
	"github.com/agentrt/agentrt/wasm/internal/wasmexport"
	"github.com/agentrt/agentrt/wire"
)

// The wire: the //go:wasmexport functions of package wasmexport
// (agentrt_in, agentrt_out, agentrt_begin, agentrt_feed, agentrt_next,
// agentrt_commit), which drive host-driven turns over wire frames in
// linear memory through a hostturn.Driver, and its control exports
// (agentrt_op, every operation of the table hostturn.Ops by name;
// agentrt_session, agentrt_sessions, agentrt_stats, agentrt_limits,
// agentrt_check, agentrt_close; docs/wire.md, "Control exports", docs/module.md "Fast
// path"). The WASI module links the same ones. agentrt_create reads a
// config frame of JSON text here (frameDriver), the frame the glue
// creates its runtimes with. A JavaScript host calls them through
// instance.exports; no js.Value is made per message. What is JavaScript's own is here: each Runtime
// object the module returns carries its number in the property
// fieldFastPath, and the exports take it as their first argument.

// fieldFastPath names the property of a Runtime object that holds its
// number on the wire. The name is from when the wire was the glue's fast
// path beside the syscall/js API; js/load.js and the tests read it.
const fieldFastPath = "fastPath"

// registerDriver gives x, the driver of a runtime's turns on both its
// routes (the wire and the Runtime object's run methods), a number on
// the wire, sets it on o and returns it.
func registerDriver(o js.Value, x *hostturn.Driver) int32 {
	n := wasmexport.Register(x)
	o.Set(fieldFastPath, n)
	return n
}

// unregisterDriver drops the runtime with number n (it was closed), unless
// turns are still to be driven to their end (cancelled): a host that
// closes a runtime with active runs leaves its entry in place, which the
// end of the last turn of a run method drops.
func unregisterDriver(n int32) {
	if x := wasmexport.Lookup(n); x != nil && x.Turns() == 0 {
		wasmexport.Unregister(n)
	}
}

func init() { wasmexport.NewDriver = frameDriver }

// frameDriver makes the runtime of agentrt_create's config frame: its
// JSON text (wire.ConfigVersionJSON) is read by createRuntime's own
// config reader (jsedge.ConfigJSON), so that the export costs the module
// no reader of its own and a config gets one set of error texts. The
// runtime has no Runtime object: its host answers model calls (unless
// the config's model is "echo") and tool calls over the wire.
func frameDriver(frame []byte) (*hostturn.Driver, error) {
	text, err := wire.ConfigJSON(frame)
	if err != nil {
		return nil, err
	}
	cfg, host, err := jsedge.ConfigJSON(text)
	if err != nil {
		return nil, err
	}
	for i := range cfg.Tools {
		cfg.Tools[i].Call = hostTool
	}
	rt, err := core.New(cfg)
	if err != nil {
		return nil, err
	}
	var native core.Model
	if !host {
		native = core.Echo{}
	}
	return hostturn.New(rt, native, jsedge.PolicyJSON), nil
}
