// Package build compiles agentrt's GOOS=js modules and lays out dist/.
// The CLI's build command, the demo server and the tests that load the
// real module all use it, so they run the very bytes browsers load.
package build

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The packages of the modules, relative to the repository root.
const (
	RuntimePkg = "./wasm/runtime"
	WorkerPkg  = "./wasm/worker"
)

// Root returns the repository root: the nearest directory at or above the
// working directory whose go.mod declares the agentrt module.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/agentrt/agentrt\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("build: not inside the agentrt repository (no go.mod found)")
		}
		dir = parent
	}
}

// NoContextTag is the build tag that compiles core.Context as a small
// interface instead of context.Context, keeping packages context and time
// out of a module: Module and WasiModule build every package but
// WorkerPkg (which links both anyway, through net/http) with it. See
// docs/adr/0002.
const NoContextTag = "agentrt_nocontext"

// Tags returns the -tags value Module and WasiModule build pkg with.
func Tags(pkg string) string {
	if pkg == WorkerPkg {
		return ""
	}
	return NoContextTag
}

// Module compiles the main package pkg (relative to root) for GOOS=js
// GOARCH=wasm into out, stripped and with trimmed paths, with Tags(pkg).
func Module(ctx context.Context, root, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-tags="+Tags(pkg), "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build: go build %s: %v\n%s", pkg, err, stderr.String())
	}
	// go build marks its output executable; a module is data, and npm
	// would ship it with that bit.
	if err := os.Chmod(out, 0o644); err != nil {
		return fmt.Errorf("build: %v", err)
	}
	return nil
}

// WasmExec returns the path of the wasm_exec.js shipped with the Go
// toolchain that builds the modules: a module must be run by the support
// file of the Go that built it.
func WasmExec(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("build: go env GOROOT: %v", err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "lib", "wasm", "wasm_exec.js")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("build: %v", err)
	}
	return p, nil
}

// Size is a file's size raw and gzip-compressed (best compression).
type Size struct {
	Raw  int64
	Gzip int64
}

// String formats the size for people, e.g. "1.52 MB raw, 0.48 MB gzip".
func (s Size) String() string {
	return fmt.Sprintf("%.2f MB raw, %.2f MB gzip", float64(s.Raw)/1e6, float64(s.Gzip)/1e6)
}

// SizeOf measures the file at path.
func SizeOf(path string) (Size, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Size{}, err
	}
	var n countWriter
	zw, _ := gzip.NewWriterLevel(&n, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		return Size{}, err
	}
	if err := zw.Close(); err != nil {
		return Size{}, err
	}
	return Size{Raw: int64(len(b)), Gzip: int64(n)}, nil
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// Dist is what Build wrote.
type Dist struct {
	Dir      string
	Module   string   // path of agentrt.wasm
	WasmExec string   // path of the copied wasm_exec.js
	Size     Size     // of the module
	Files    []string // every file written, relative to Dir, sorted
	// WasiSnapshot reports whether WasiModuleName is pre-initialized
	// (see WasiModules); WasiPlainModuleName never is.
	WasiSnapshot bool
	// GlueBundled reports whether glue.js is one module holding the
	// internal ones (see BundleGlue).
	GlueBundled bool
}

// Build writes dir as the npm package agentrt: agentrt.wasm, the
// wasm_exec.js of the Go that built it, the JavaScript entry points of js/
// (glue.js bundled with the internal modules it imports, see BundleGlue;
// without esbuild, every module that is not a test, one file each), their
// type files, js/package.json, the package's README.md (PackageReadme) and the
// repository's LICENSE. The package.json also makes Node treat the
// directory's .js files as ES modules.
func Build(ctx context.Context, root, dir string) (*Dist, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d := &Dist{Dir: dir, Module: filepath.Join(dir, "agentrt.wasm"), WasmExec: filepath.Join(dir, "wasm_exec.js")}
	var err error
	if err = Module(ctx, root, RuntimePkg, d.Module); err != nil {
		return nil, err
	}
	if d.WasiSnapshot, err = WasiModules(ctx, root, dir, os.Stderr); err != nil {
		return nil, err
	}
	src, err := WasmExec(ctx)
	if err != nil {
		return nil, err
	}
	if err := copyFile(src, d.WasmExec); err != nil {
		return nil, err
	}
	d.Files = []string{"agentrt.wasm", WasiModuleName, WasiPlainModuleName, "wasm_exec.js"}
	names, err := PackageSources(root)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if err := copyFile(filepath.Join(root, "js", name), filepath.Join(dir, name)); err != nil {
			return nil, err
		}
		d.Files = append(d.Files, name)
	}
	if d.GlueBundled, err = BundleGlue(ctx, root, dir, os.Stderr); err != nil {
		return nil, err
	}
	if d.GlueBundled {
		internal, err := InternalModules(root)
		if err != nil {
			return nil, err
		}
		d.Files = slices.DeleteFunc(d.Files, func(f string) bool { return slices.Contains(internal, f) })
	}
	for name, src := range map[string]string{"README.md": PackageReadme, "LICENSE": "LICENSE"} {
		if err := copyFile(filepath.Join(root, src), filepath.Join(dir, name)); err != nil {
			return nil, err
		}
		d.Files = append(d.Files, name)
	}
	sort.Strings(d.Files)
	if d.Size, err = SizeOf(d.Module); err != nil {
		return nil, err
	}
	return d, nil
}

// PackageReadme is the package's README.md, relative to the repository
// root: what npm shows on the package's page, written for its users (the
// repository's README is written for its contributors too).
const PackageReadme = "internal/build/package/README.md"

// PackageSources returns the files of js/ that Build copies into the
// package, sorted: package.json, and each .js and .d.ts file that is not a
// test (named *.test.js, *_test.js or *.spec.js). Directories (js/test/)
// are not shipped.
func PackageSources(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "js"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || isTestFile(name) {
			continue
		}
		if name == "package.json" || strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".d.ts") {
			names = append(names, name)
		}
	}
	return names, nil
}

func isTestFile(name string) bool {
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".d.ts"), ".js")
	return strings.HasSuffix(base, ".test") || strings.HasSuffix(base, "_test") || strings.HasSuffix(base, ".spec")
}

// Pack runs `npm pack` in the package directory dir (as Build wrote it)
// and writes the tarball into dest. It returns the tarball's path.
func Pack(ctx context.Context, dir, dest string) (string, error) {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "npm", "pack", "--json", "--pack-destination", dest)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errors.New("build: npm is not installed: install Node.js (npm comes with it) to pack the package")
		}
		return "", fmt.Errorf("build: npm pack: %v\n%s", err, stderr.String())
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 || packed[0].Filename == "" {
		return "", fmt.Errorf("build: npm pack printed no tarball name: %s", out)
	}
	return filepath.Join(dest, filepath.Base(packed[0].Filename)), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// InRoot returns dir as an absolute path: as it is when absolute, else
// relative to the repository root. The CLI's -out and -dist flags mean
// paths in the repository, wherever the command runs from.
func InRoot(root, dir string) string {
	if filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(root, dir)
}
