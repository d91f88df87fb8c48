package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentrt/agentrt/internal/build"
)

func init() {
	register(command{name: "build", summary: "build dist/: the npm package agentrt (module, wasm_exec.js, glue, types)", run: runBuild})
	register(command{name: "pack", summary: "build dist/ and pack it with npm into a tarball to install or publish", run: runPack})
}

func runBuild(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	out := fs.String("out", "dist", "output directory, relative to the repository root")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := buildDist(ctx, *out)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s\nmodule %s: %s\n", d.Dir, filepath.Base(d.Module), d.Size)
	return nil
}

// buildDist builds the package into out (relative to the repository
// root), saying on stderr what it is doing.
func buildDist(ctx context.Context, out string) (*build.Dist, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	return buildDistIn(ctx, root, out)
}

// buildDistIn builds the package of the repository at root into out
// (relative to root), saying on stderr what it is doing.
func buildDistIn(ctx context.Context, root, out string) (*build.Dist, error) {
	var d *build.Dist
	var err error
	err = progress(os.Stderr, "compiling the module into "+build.InRoot(root, out), buildHint, func() error {
		d, err = build.Build(ctx, root, build.InRoot(root, out))
		return err
	})
	return d, err
}

func runPack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	out := fs.String("out", "dist", "package directory to build, relative to the repository root")
	dest := fs.String("dest", ".", "directory to write the tarball to, relative to the repository root")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := buildDist(ctx, *out)
	if err != nil {
		return err
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	tgz, err := build.Pack(ctx, d.Dir, build.InRoot(root, *dest))
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (module %s)\ninstall it with: npm install %s\n", tgz, d.Size, tgz)
	return nil
}
