package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// The binary carries no module: it finds the one it runs, so that it is
// always the module the repository builds (docs/cli.md, "Where the
// modules come from"). The places, in order:
//
//  1. --module, when given;
//  2. next to the binary, then in a dist/ directory next to it (a binary
//     shipped with dist/, or built at the repository root, where
//     `agentrt build` writes dist/);
//  3. the dist/ of the agentrt repository holding the working directory or
//     the binary, built there first when it is missing.
//
// A module found nowhere is an error saying how to get one.

// exeDir returns the directory of the running binary, with symbolic links
// resolved, or "" when it is not known.
func exeDir() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Dir(p)
}

// besideBinary returns the candidate paths of name next to the binary:
// in its directory, then in dist/ there.
func besideBinary(name string) []string {
	dir := exeDir()
	if dir == "" {
		return nil
	}
	return []string{filepath.Join(dir, name), filepath.Join(dir, "dist", name)}
}

// repoRoot returns the agentrt repository holding the working directory,
// else the one holding the binary, or an error when neither is in one:
// the checkout build, pack, demo and worker work in, and whose dist/
// chat falls back to.
func repoRoot() (string, error) {
	if root, err := build.Root(); err == nil {
		return root, nil
	}
	if dir := exeDir(); dir != "" {
		if root, ok := rootAbove(dir); ok {
			return root, nil
		}
	}
	return "", errors.New("not inside the agentrt repository (no go.mod of github.com/agentrt/agentrt above the working directory or the binary)")
}

// rootAbove returns the nearest directory at or above dir whose go.mod
// declares the agentrt module, as build.Root does for the working
// directory.
func rootAbove(dir string) (string, bool) {
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/agentrt/agentrt\n")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// isFile reports whether path names a regular file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// findModule returns the module file name to run: path when given (it
// must exist), else the first of the places above that holds it; in the
// repository's dist/ it is made by makeIt(root, file) first when missing.
func findModule(path, name string, makeIt func(root, file string) error) (string, error) {
	if path != "" {
		if !isFile(path) {
			return "", fmt.Errorf("--module %s: no such file", path)
		}
		return path, nil
	}
	for _, p := range besideBinary(name) {
		if isFile(p) {
			return p, nil
		}
	}
	root, err := repoRoot()
	if err != nil {
		return "", missingModule(name)
	}
	p := filepath.Join(root, "dist", name)
	if isFile(p) {
		return p, nil
	}
	if err := makeIt(root, p); err != nil {
		return "", err
	}
	return p, nil
}

// missingModule is the error of a module found nowhere: where it was
// looked for, and how to get it.
func missingModule(name string) error {
	where := "next to the agentrt binary"
	if dir := exeDir(); dir != "" {
		where = fmt.Sprintf("in %s or %s", dir, filepath.Join(dir, "dist"))
	}
	return fmt.Errorf("%s not found %s, and not inside the agentrt repository: "+
		"run `go run ./cmd/agentrt build` in a checkout and copy its dist/ next to the binary, "+
		"run the command inside the checkout, or pass --module FILE", name, where)
}

// chatModule returns the GOOS=js module chat runs (findModule), building
// the repository's dist/ when it is missing there.
func chatModule(ctx context.Context, path string) (string, error) {
	return findModule(path, "agentrt.wasm", func(root, _ string) error {
		_, err := buildDistIn(ctx, root, "dist")
		return err
	})
}

// chatWASIModule returns the WASI module chat --wasi runs (findModule),
// compiling it into the repository's dist/ when it is missing there.
func chatWASIModule(ctx context.Context, path string) (string, error) {
	return findModule(path, build.WasiModuleName, func(root, file string) error {
		return progress(os.Stderr, "compiling the WASI module into "+file, buildHint, func() error {
			return build.WasiModule(ctx, root, build.WasiPkg, file)
		})
	})
}

// The worker's bundle directory next to the binary: `agentrt worker
// --build-only` writes one (into dist/worker by default).
const workerBundleDir = "worker"

// findBundle returns a worker bundle next to the binary (worker/ or
// dist/worker/ holding workerd.BundleFiles), or "".
func findBundle() string {
	for _, dir := range besideBinary(workerBundleDir) {
		ok := true
		for _, f := range workerd.BundleFiles {
			ok = ok && isFile(filepath.Join(dir, f))
		}
		if ok {
			return dir
		}
	}
	return ""
}

// copyBundle copies the bundle files of src into dst, where workerd.Start
// may write its configuration without touching src.
func copyBundle(src, dst string) (*workerd.Bundle, error) {
	for _, f := range workerd.BundleFiles {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			return nil, err
		}
	}
	size, err := build.SizeOf(filepath.Join(dst, workerd.ModuleFile))
	if err != nil {
		return nil, err
	}
	return &workerd.Bundle{Dir: dst, Size: size}, nil
}

// workerdBinary returns the workerd to run outside the repository: the
// one of a node_modules/ next to the binary, else workerd on PATH.
func workerdBinary() (string, error) {
	if dir := exeDir(); dir != "" {
		if p := filepath.Join(dir, "node_modules", ".bin", "workerd"); isFile(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("workerd"); err == nil {
		return p, nil
	}
	return "", errors.New("workerd not found next to the binary (node_modules/.bin/workerd) nor on PATH: install the npm package workerd (`npm install workerd`) and put its binary on PATH")
}
