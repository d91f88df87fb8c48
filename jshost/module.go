package jshost

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/agentrt/agentrt/internal/wazerocache"
	"github.com/tetratelabs/wazero"
)

// Module is a GOOS=js WebAssembly module compiled for jshost. One Module
// serves any number of Instances. Close it when done.
type Module struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	imports  []string
	n        atomic.Int64
}

// CompileOptions configure Compile. The nil *CompileOptions, and each
// zero field, mean the default.
type CompileOptions struct {
	// CacheDir is the directory of wazero's compilation cache; empty
	// means DefaultCacheDir().
	CacheDir string
}

// DefaultCacheDir is where compiled modules are cached by default: the
// directory agentrt-wazero under os.UserCacheDir, or "" (an in-memory
// cache) when there is no user cache directory. wasihost uses the same.
func DefaultCacheDir() string { return wazerocache.DefaultDir() }

// Compile compiles a GOOS=js module (the bytes of a .wasm file). It fails
// if the module imports anything this host does not provide: a module
// built by a Go whose ABI differs from the one jshost implements.
func Compile(ctx context.Context, wasm []byte, opts *CompileOptions) (*Module, error) {
	dir := DefaultCacheDir()
	if opts != nil && opts.CacheDir != "" {
		dir = opts.CacheDir
	}
	// Not WithCloseOnContextDone: it starts a goroutine for every call
	// into the guest (and each call from JavaScript makes several, for
	// getsp), which made calls about 7 times slower.
	cfg := wazero.NewRuntimeConfig().WithCompilationCache(wazerocache.For(dir))
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := instantiateHost(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("jshost: compile: %w", err)
	}
	m := &Module{rt: rt, compiled: compiled}
	var unknown []string
	for _, f := range compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		m.imports = append(m.imports, mod+"."+name)
		if _, ok := hostFuncs[name]; mod != ImportModule || !ok {
			unknown = append(unknown, mod+"."+name)
		}
	}
	for _, mem := range compiled.ImportedMemories() {
		mod, name, _ := mem.Import()
		unknown = append(unknown, mod+"."+name+" (memory)")
	}
	sort.Strings(m.imports)
	if len(unknown) > 0 {
		rt.Close(ctx)
		return nil, fmt.Errorf("jshost: the module imports %s, which this host does not provide (built by a Go with another GOOS=js ABI?)", strings.Join(unknown, ", "))
	}
	for _, exp := range []string{expRun, expResume, expGetsp} {
		if _, ok := compiled.ExportedFunctions()[exp]; !ok {
			rt.Close(ctx)
			return nil, fmt.Errorf("jshost: the module does not export %q: not a GOOS=js module", exp)
		}
	}
	return m, nil
}

// CompileFile compiles the .wasm file at path; see Compile.
func CompileFile(ctx context.Context, path string, opts *CompileOptions) (*Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Compile(ctx, b, opts)
}

// ImportedFunctions returns the module's imports as "module.name", sorted.
func (m *Module) ImportedFunctions() []string { return append([]string(nil), m.imports...) }

// ExportedFunctions returns the names of the module's exported
// functions, sorted.
func (m *Module) ExportedFunctions() []string {
	fns := m.compiled.ExportedFunctions()
	out := make([]string, 0, len(fns))
	for n := range fns {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Close releases the module and closes every Instance still open on it.
func (m *Module) Close(ctx context.Context) error { return m.rt.Close(ctx) }
