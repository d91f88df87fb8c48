package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/internal/envvar"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

func init() {
	register(command{name: "worker", summary: "build the Cloudflare Worker and run it locally under workerd", run: runWorker})
}

// envFlag collects repeated -env NAME=VALUE flags.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want NAME=VALUE")
	}
	e[k] = v
	return nil
}

func runWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8787", "address to serve the worker on")
	out := fs.String("out", "", "write the bundle (worker.mjs, wasm_exec.js, worker.wasm, config.capnp) here and keep it; default: a temp dir removed on exit")
	buildOnly := fs.Bool("build-only", false, "write the bundle to -out and exit (for wrangler deploy)")
	allowLocal := fs.Bool("allow-local-network", false, "let the worker fetch local addresses (a local OpenAI-compatible server)")
	durable := fs.Bool("durable", false, "the durable deployment: a Durable Object per conversation, with SQLite-backed storage (AGENTRT_SESSIONS=durable)")
	state := fs.String("state", "", "with -durable: keep the objects' storage in this directory, across restarts; default: a temp dir removed on exit")
	env := envFlag{}
	fs.Var(env, "env", "a worker variable or secret, NAME=VALUE (repeatable); AGENTRT_* variables of this process are passed too")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *state != "" && !*durable {
		return usageError(fs, "-state needs -durable: only the durable deployment stores conversations")
	}
	// The worker is built from the repository holding the working
	// directory or the binary; elsewhere, a bundle next to the binary
	// runs (see findBundle).
	root, rootErr := repoRoot()
	found := ""
	if rootErr != nil {
		if found = findBundle(); found == "" {
			return fmt.Errorf("no worker to run: not inside the agentrt repository, and no bundle (%s, %s, %s) in worker/ or dist/worker/ next to the binary: "+
				"run `go run ./cmd/agentrt worker --build-only` in a checkout and copy its dist/worker/ next to the binary, or run the command inside the checkout",
				workerd.EntryFile, workerd.WasmExecFile, workerd.ModuleFile)
		}
		if *buildOnly {
			return errors.New("--build-only builds the worker from the repository: run it inside the agentrt repository")
		}
	}
	// The AGENTRT_* variables of this shell, then -env flags over them.
	vars := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, envvar.Prefix) && k != envvar.Global {
			vars[k] = v
		}
	}
	for k, v := range env {
		vars[k] = v
	}
	if v, ok := vars[envvar.Sessions]; ok && v == "durable" {
		*durable = true
	}
	stateDir := ""
	var err error
	if *state != "" {
		// Relative to where the command runs, like any data directory.
		if stateDir, err = filepath.Abs(*state); err != nil {
			return err
		}
	}
	dir := *out
	switch {
	case dir != "" && found != "":
		dir, err = filepath.Abs(dir)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	case dir != "":
		dir = build.InRoot(root, dir)
	case *buildOnly:
		dir = filepath.Join(root, "dist", "worker")
	default:
		if dir, err = os.MkdirTemp("", "agentrt-worker-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	// Take the port before building: a busy port is reported first, and
	// workerd serves on this very socket.
	var ln *net.TCPListener
	if !*buildOnly {
		l, err := net.Listen("tcp", *addr)
		if err != nil {
			return listenError(*addr, err)
		}
		ln = l.(*net.TCPListener)
		defer ln.Close()
	}
	var b *workerd.Bundle
	bin := ""
	if found != "" {
		if bin, err = workerdBinary(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "the worker bundle of %s\n", found)
		b, err = copyBundle(found, dir)
	} else {
		err = progress(os.Stderr, "compiling the worker into "+dir, buildHint, func() error {
			b, err = workerd.Build(ctx, root, dir)
			return err
		})
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "worker module: %s\n", b.Size)
	if *buildOnly {
		fmt.Printf("wrote %s\n", dir)
		return nil
	}
	fmt.Fprintln(os.Stderr, "starting workerd...")
	p, err := workerd.Start(ctx, b, workerd.Options{Binary: bin, Root: root, Listener: ln, Env: vars, AllowLocalNetwork: *allowLocal, Durable: *durable, StateDir: stateDir, Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		return err
	}
	mode := "a session per isolate"
	if *durable {
		mode = "a Durable Object per conversation, storage in a temp dir removed on exit"
		if stateDir != "" {
			mode = "a Durable Object per conversation, storage in " + stateDir
		}
	}
	fmt.Printf("agentrt worker on %s (workerd, %s; ready, Ctrl-C stops it)\n", p.URL, mode)
	select {
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "stopping workerd...")
		p.Stop()
		return nil
	case <-p.Exited():
		return errors.New("workerd exited")
	}
}
