//go:build wasm

package wasmexport

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
)

// NewDriver makes the runtime of a config frame for agentrt_create: each
// module reads the frame its own way (create_wasip1.go: the binary frame,
// with wire.DecodeConfig; the GOOS=js module sets it to read the frame's
// JSON text with its createRuntime's reader, which that module carries
// anyway). A refused config is a *core.Error. Nil refuses every frame.
var NewDriver func(frame []byte) (*hostturn.Driver, error)

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
	if NewDriver == nil {
		return -Refuse(core.NewError(core.CodeInvalidArgument, "config frame: this module creates no runtime from a frame"))
	}
	x, err := NewDriver(frame)
	if err != nil {
		return -Refuse(core.AsError(err))
	}
	n = Register(x)
	Answer(nil)
	return n
}
