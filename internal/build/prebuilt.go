package build

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DistEnv names the environment variable that points the tests at a
// dist/ directory `agentrt build` wrote. `make test` builds dist/ once,
// sets it, and every suite loads the modules from there instead of
// building them again. The JavaScript suites read it too, with dist/ as
// their default; the Go tests build their own modules when it is unset,
// so that `go test ./...` needs no build step (see TestModule).
//
// The modules are used as they are: after a change to the Go code,
// build dist/ again before running the tests with it set.
const DistEnv = "AGENTRT_DIST"

// WorkerDir is the worker's bundle directory inside a dist/ directory,
// as `agentrt worker --build-only` writes it. It is not part of the npm
// package.
const WorkerDir = "worker"

// Prebuilt returns the absolute path of the directory $AGENTRT_DIST
// names, or "" when it is unset or empty.
func Prebuilt() string {
	d := os.Getenv(DistEnv)
	if d == "" {
		return ""
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// prebuiltFile returns the path of name in the Prebuilt directory dist,
// or an error saying how to build it when it is not there.
func prebuiltFile(dist, name string) (string, error) {
	p := filepath.Join(dist, name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("build: %s=%s holds no %s: run `go run ./cmd/agentrt build -out %s`, or unset %s to build the modules in the tests", DistEnv, dist, name, dist, DistEnv)
	}
	return p, nil
}

// TestModule returns the path of the GOOS=js module (RuntimePkg) for a
// test: $AGENTRT_DIST/agentrt.wasm when DistEnv is set, else the module
// built into dir (with Module, as Build builds it).
func TestModule(ctx context.Context, root, dir string) (string, error) {
	if dist := Prebuilt(); dist != "" {
		return prebuiltFile(dist, "agentrt.wasm")
	}
	out := filepath.Join(dir, "agentrt.wasm")
	if err := Module(ctx, root, RuntimePkg, out); err != nil {
		return "", err
	}
	return out, nil
}

// WasiBuilds are the paths of the WASI module's two builds (see
// WasiModules).
type WasiBuilds struct {
	// Module is WasiModuleName, pre-initialized when Snapshot.
	Module string
	// Plain is WasiPlainModuleName, which exports _initialize.
	Plain string
	// Snapshot reports whether Module is the pre-initialized build.
	Snapshot bool
}

// TestWasiModules returns the WASI module's two builds for a test: those
// of $AGENTRT_DIST when DistEnv is set, else both built into dir with
// WasiModules (warn as there).
func TestWasiModules(ctx context.Context, root, dir string, warn io.Writer) (WasiBuilds, error) {
	if dist := Prebuilt(); dist != "" {
		var w WasiBuilds
		var err error
		if w.Module, err = prebuiltFile(dist, WasiModuleName); err != nil {
			return WasiBuilds{}, err
		}
		if w.Plain, err = prebuiltFile(dist, WasiPlainModuleName); err != nil {
			return WasiBuilds{}, err
		}
		if w.Snapshot, err = differ(w.Module, w.Plain); err != nil {
			return WasiBuilds{}, err
		}
		return w, nil
	}
	w := WasiBuilds{Module: filepath.Join(dir, WasiModuleName), Plain: filepath.Join(dir, WasiPlainModuleName)}
	var err error
	if w.Snapshot, err = WasiModules(ctx, root, dir, warn); err != nil {
		return WasiBuilds{}, err
	}
	return w, nil
}

// differ reports whether the files a and b differ. WasiModules writes a
// copy of the plain build as WasiModuleName when Wizer is missing, so
// the two differ exactly when it is the snapshot.
func differ(a, b string) (bool, error) {
	x, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return string(x) != string(y), nil
}
