package jshost

import (
	"context"
	"errors"
)

// Exports is a view of the guest's own exported functions (those a
// GOOS=js module declares with //go:wasmexport) and of its linear memory,
// for hosts that call them directly as JavaScript's instance.exports
// does. Get it with Instance.Exports.
//
// Each method runs on the instance's event loop, like Call: exports never
// run concurrently with the guest or with each other.
type Exports struct{ in *Instance }

// Exports returns the guest's exports.
func (in *Instance) Exports() Exports { return Exports{in} }

// ErrNoExport is returned by Exports.Call for a name the module does not
// export.
var ErrNoExport = errors.New("jshost: the module has no such export")

// Call calls the export name with params (i32 values as uint64, as
// api.Function takes them) and returns its results. A trap or an exit of
// the guest is an *ExitError, as for Call.
func (x Exports) Call(ctx context.Context, name string, params ...uint64) ([]uint64, error) {
	in := x.in
	if in.mod.ExportedFunction(name) == nil {
		return nil, ErrNoExport
	}
	var out []uint64
	err := in.do(ctx, func() error {
		if err := in.ended(); err != nil {
			return err
		}
		res, err := in.callGuest(name, params...)
		if err != nil {
			return err
		}
		// The guest's goroutines started by the call run at the next
		// resume, as under a JavaScript host; nothing here depends on them.
		out = res
		return nil
	})
	return out, err
}

// Write copies b into the guest's memory at addr.
func (x Exports) Write(ctx context.Context, addr uint32, b []byte) error {
	in := x.in
	return in.do(ctx, func() error {
		if !in.mem.Write(addr, b) {
			return errMemory
		}
		return nil
	})
}

// Read returns a copy of n bytes of the guest's memory at addr.
func (x Exports) Read(ctx context.Context, addr, n uint32) ([]byte, error) {
	in := x.in
	var out []byte
	err := in.do(ctx, func() error {
		b, ok := in.mem.Read(addr, n)
		if !ok {
			return errMemory
		}
		out = append([]byte(nil), b...)
		return nil
	})
	return out, err
}

// Yield gives the guest's goroutines their turn, as a JavaScript host
// does when its event loop calls wasm_exec.js's _resume with no event
// pending: goroutines the exports' calls made ready run until all wait
// again. Through export calls alone they never run, and Go's garbage
// collector, whose workers are goroutines, never finishes a cycle; a
// host that calls exports in a loop calls Yield between them, as the
// glue gives Go an idle moment (js/idle.js).
func (x Exports) Yield(ctx context.Context) error {
	in := x.in
	return in.do(ctx, func() error {
		if err := in.ended(); err != nil {
			return err
		}
		return in.resume()
	})
}
