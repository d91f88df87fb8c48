// Package wasihost runs agentrt's WASI module (dist/agentrt-wasi.wasm,
// built from wasm/wasi) on plain wazero, with no JavaScript world: a Go
// server runs the sandboxed runtime with a native Go model and tools.
// It speaks the boundary wire (package wire) through the module's
// exports, as docs/wasi.md describes, and keeps each session's mirror so
// that a model call costs no crossing per message already sent.
//
// Either build of the module runs: the pre-initialized one
// (dist/agentrt-wasi.wasm) or the plain one (dist/agentrt-wasi-plain.wasm).
//
//	m, err := wasihost.CompileFile(ctx, "dist/agentrt-wasi.wasm", nil)
//	defer m.Close(ctx)
//	in, err := m.Instantiate(ctx)
//	rt, err := in.NewRuntime(wasihost.Config{Model: myModel})
//	res, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "hi",
//		WithHistory: true, History: history})
//
// A Runtime answers like core.Runtime: the same results, the same typed
// errors (*core.Error with a stable code), the same seeding. A module
// that traps (a bug in the module, or memory exhausted) makes its
// instance unusable: every later call returns ErrDead.
package wasihost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentrt/agentrt/internal/wazerocache"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Module is a compiled WASI module. Instantiate it as many times as
// needed; Close it when done, which closes its instances.
type Module struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	stderr   io.Writer
}

// CompileOptions configure Compile. The nil *CompileOptions, and each
// zero field, mean the default.
type CompileOptions struct {
	// CacheDir is the directory of wazero's compilation cache; empty
	// means the directory agentrt-wazero under os.UserCacheDir (an
	// in-memory cache when there is none).
	CacheDir string
	// Stderr receives what the module writes to stderr (a Go panic's
	// trace); nil means os.Stderr.
	Stderr io.Writer
}

// The exports the module must have (docs/wasi.md). _initialize is not
// one: the pre-initialized build (dist/agentrt-wasi.wasm) has none, and
// Instantiate calls it only when the module exports it (the plain build,
// dist/agentrt-wasi-plain.wasm).
var requiredExports = []string{
	expIn, expOut, expCreate, expClose, expBegin, expFeed,
	expNext, expOp, expSession, expSessions, expStats,
	expLimits, expCheck,
}

// Compile compiles the bytes of a WASI module. It fails if the module
// lacks one of the exports docs/wasi.md lists (a GOOS=js module, or
// another program).
func Compile(ctx context.Context, wasm []byte, opts *CompileOptions) (*Module, error) {
	dir := wazerocache.DefaultDir()
	var stderr io.Writer = os.Stderr
	if opts != nil {
		if opts.CacheDir != "" {
			dir = opts.CacheDir
		}
		if opts.Stderr != nil {
			stderr = opts.Stderr
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(wazerocache.For(dir)))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasihost: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasihost: compile: %w", err)
	}
	exports := compiled.ExportedFunctions()
	for _, name := range requiredExports {
		if _, ok := exports[name]; !ok {
			rt.Close(ctx)
			return nil, fmt.Errorf("wasihost: the module does not export %q: not agentrt's WASI module", name)
		}
	}
	return &Module{rt: rt, compiled: compiled, stderr: stderr}, nil
}

// CompileFile compiles the .wasm file at path; see Compile.
func CompileFile(ctx context.Context, path string, opts *CompileOptions) (*Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Compile(ctx, b, opts)
}

// Close closes the module and every instance of it.
func (m *Module) Close(ctx context.Context) error { return m.rt.Close(ctx) }

// ErrDead is returned by every call on an instance after the module
// trapped or the instance was closed.
var ErrDead = errors.New("wasihost: the instance is closed or trapped")
