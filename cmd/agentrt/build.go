package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/agentrt/agentrt/internal/build"
)

func init() {
	register(command{name: "build", summary: "build dist/: the module, wasm_exec.js, glue.js", run: runBuild})
}

func runBuild(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	out := fs.String("out", "dist", "output directory, relative to the repository root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := build.Root()
	if err != nil {
		return err
	}
	d, err := build.Build(ctx, root, build.InRoot(root, *out))
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s\nmodule %s: %s\n", d.Dir, filepath.Base(d.Module), d.Size)
	return nil
}
