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
	"strings"
)

// EsbuildBin is the bundler's command, relative to the repository root:
// the esbuild binary the npm lock file pins (npm package esbuild).
const EsbuildBin = "node_modules/.bin/esbuild"

// ErrNoEsbuild is returned (wrapped) by BundleGlue when the esbuild
// binary is not installed and the environment variable CI is set.
var ErrNoEsbuild = errors.New("build: esbuild is not installed: run `npm ci` in the repository root (it installs the pinned esbuild)")

// Entries are the package's JavaScript entry points (package.json's
// "exports"): every other module of js/ is internal, imported by them.
// worker.js is the module worker mode starts in a Web Worker
// (docs/adr/0021-worker-mode.md); it imports the glue through "./glue.js"
// only, and the bundle finds it by a literal bundlers downstream rewrite.
// http.js is the HTTP client of resumable runs; it too imports the
// glue through "./glue.js" only. ai.js is the AI SDK layer, the one
// module that imports a package ("ai", an optional peer dependency).
var Entries = []string{"ai.js", "glue.js", "http.js", "openai.js", "worker.js"}

// bundleExternal are the files the bundled glue still imports at run
// time: wasm_exec.js, loaded (only when the realm has no Go class) by a
// dynamic import that bundlers downstream must see as it is.
var bundleExternal = []string{"./wasm_exec.js"}

// bundleBanner heads the bundled glue.js.
const bundleBanner = "// agentrt's glue: js/glue.js and the modules it imports, in one ES module\n" +
	"// (agentrt build). The API and its documentation: glue.d.ts.\n"

// BundleGlue writes dir/glue.js as one ES module: js/glue.js and every
// internal module it imports, folded by esbuild (EsbuildBin under root),
// and removes from dir the internal modules Build copied there. One file
// instead of a dozen is what a cold start asks for: Node resolves, reads
// and links each module of a graph on its own, and a page without a
// bundler fetches each one (docs/adr/0015). openai.js imports the glue
// through "./glue.js" only, so it shares the bundle's classes. It
// reports whether the glue is bundled.
//
// # Notes
//
//   - Without the esbuild binary, it fails with ErrNoEsbuild when the
//     environment variable CI is set; otherwise it warns on warn (when not
//     nil), leaves the modules Build copied as they are (they work the
//     same, one file each) and returns false.
func BundleGlue(ctx context.Context, root, dir string, warn io.Writer) (bool, error) {
	bin := filepath.Join(root, EsbuildBin)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			return false, ErrNoEsbuild
		}
		if warn != nil {
			fmt.Fprintf(warn, "build: %s is missing: glue.js ships unbundled, one module per file (run `npm ci` to install esbuild)\n", EsbuildBin)
		}
		return false, nil
	}
	args := []string{filepath.Join("js", "glue.js"), "--bundle", "--format=esm", "--platform=neutral",
		"--log-level=error", "--banner:js=" + bundleBanner, "--outfile=" + filepath.Join(dir, "glue.js")}
	for _, e := range bundleExternal {
		args = append(args, "--external:"+e)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("build: esbuild js/glue.js: %v\n%s", err, stderr.String())
	}
	// ai.js folds in the internal modules it alone imports (uimessages.js,
	// aichunks.js); the glue and the AI SDK stay imports, so it shares the
	// bundle's classes and the app's "ai".
	args = []string{filepath.Join("js", "ai.js"), "--bundle", "--format=esm", "--platform=neutral",
		"--log-level=error", "--external:./glue.js", "--external:ai", "--outfile=" + filepath.Join(dir, "ai.js")}
	cmd = exec.CommandContext(ctx, bin, args...)
	cmd.Dir = root
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("build: esbuild js/ai.js: %v\n%s", err, stderr.String())
	}
	internal, err := InternalModules(root)
	if err != nil {
		return false, err
	}
	for _, name := range internal {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
	}
	return true, nil
}

// InternalModules returns the JavaScript modules of PackageSources that
// are not Entries: the ones BundleGlue folds into glue.js.
func InternalModules(root string) ([]string, error) {
	names, err := PackageSources(root)
	if err != nil {
		return nil, err
	}
	var internal []string
	for _, name := range names {
		if strings.HasSuffix(name, ".js") && !isEntry(name) {
			internal = append(internal, name)
		}
	}
	return internal, nil
}

func isEntry(name string) bool {
	for _, e := range Entries {
		if name == e {
			return true
		}
	}
	return false
}
