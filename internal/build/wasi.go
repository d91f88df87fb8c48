package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// WasiPkg is the package of the module for WASI hosts. Build writes two
// builds of it into dist/: WasiModuleName, pre-initialized (a snapshot of
// the module's memory taken after its _initialize ran, so a host calls
// its exports at once), and WasiPlainModuleName, the module as go build
// writes it, for hosts that must run _initialize themselves.
const (
	WasiPkg             = "./wasm/wasi"
	WasiModuleName      = "agentrt-wasi.wasm"
	WasiPlainModuleName = "agentrt-wasi-plain.wasm"
)

// WizerBin is the pre-initializer's command, relative to the repository
// root: the Wizer binary the npm lock file pins (npm package
// @bytecodealliance/wizer).
const WizerBin = "node_modules/.bin/wizer"

// ErrNoWizer is returned (wrapped) by WasiModules when the Wizer binary
// is not installed and the environment variable CI is set.
var ErrNoWizer = errors.New("build: Wizer is not installed: run `npm ci` in the repository root (it installs the pinned @bytecodealliance/wizer)")

// WasiModule compiles the main package pkg (relative to root) for
// GOOS=wasip1 GOARCH=wasm as a reactor (-buildmode=c-shared) into out,
// stripped, with trimmed paths and with Tags(pkg). The result is the
// plain build: a host calls its _initialize once before any other export.
func WasiModule(ctx context.Context, root, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-tags="+Tags(pkg), "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build: go build %s: %v\n%s", pkg, err, stderr.String())
	}
	if err := os.Chmod(out, 0o644); err != nil {
		return fmt.Errorf("build: %v", err)
	}
	return nil
}

// Preinitialize writes to out a snapshot of the plain WASI module in:
// Wizer (WizerBin under root) instantiates it, runs its _initialize (the
// Go runtime's start and every package's init), and writes the module
// with its memory and globals as they were then, and without the
// _initialize export. A host of the snapshot calls no _initialize.
//
// It returns an error wrapping os.ErrNotExist when WizerBin is missing.
func Preinitialize(ctx context.Context, root, in, out string) error {
	bin := filepath.Join(root, WizerBin)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("build: %s: %w", WizerBin, os.ErrNotExist)
	}
	cmd := exec.CommandContext(ctx, bin, "--allow-wasi", "--init-func", "_initialize",
		"--wasm-bulk-memory", "true", "-o", out, in)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build: wizer %s: %v\n%s", filepath.Base(in), err, stderr.String())
	}
	if err := os.Chmod(out, 0o644); err != nil {
		return fmt.Errorf("build: %v", err)
	}
	return nil
}

// WasiModules builds the WASI module into dir twice: WasiPlainModuleName
// (go build's output) and WasiModuleName (its pre-initialized snapshot,
// see Preinitialize). It reports whether WasiModuleName is the snapshot.
//
// # Notes
//
//   - Without the Wizer binary, it fails with ErrNoWizer when the
//     environment variable CI is set; otherwise it writes a copy of the
//     plain build as WasiModuleName, warns on warn (when not nil) and
//     returns false. Both files work with every host that calls
//     _initialize when the module exports it (docs/wasi.md).
func WasiModules(ctx context.Context, root, dir string, warn io.Writer) (snapshot bool, err error) {
	plain := filepath.Join(dir, WasiPlainModuleName)
	out := filepath.Join(dir, WasiModuleName)
	if err := WasiModule(ctx, root, WasiPkg, plain); err != nil {
		return false, err
	}
	err = Preinitialize(ctx, root, plain, out)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return false, withoutWizer(plain, out, warn)
}

// withoutWizer is WasiModules' way on when Wizer is missing: ErrNoWizer
// under CI (out is not written), else a warning and a copy of plain as
// out.
func withoutWizer(plain, out string, warn io.Writer) error {
	if os.Getenv("CI") != "" {
		return ErrNoWizer
	}
	if warn != nil {
		fmt.Fprintf(warn, "build: %s is missing: %s is the plain build, not pre-initialized (run `npm ci` to install Wizer)\n", WizerBin, WasiModuleName)
	}
	return copyFile(plain, out)
}
