//go:build !js

// Package workerd builds agentrt's Cloudflare Worker and runs it locally
// under the real workerd binary (the npm package "workerd", installed in
// node_modules/ by `npm ci`). The worker command and the worker's tests
// use it:
//
//	b, err := workerd.Build(ctx, root, dir)       // module, wasm_exec.js, worker.mjs
//	p, err := workerd.Start(ctx, b, workerd.Options{Addr: "127.0.0.1:8787"})
//	defer p.Stop()
//	// p.URL answers the HTTP API.
//
// The generated configuration is a capnp file next to the modules, so
// the directory can be inspected and served again with
// `workerd serve config.capnp`.
//
// The package is for development machines (it starts processes): it does
// not build for GOOS=js.
package workerd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/internal/envvar"
)

// File names inside a bundle directory. worker.mjs imports the other two
// by these names.
const (
	EntryFile    = "worker.mjs"
	WasmExecFile = "wasm_exec.js"
	ModuleFile   = "worker.wasm"
	ConfigFile   = "config.capnp"
)

// CompatibilityDate is the Workers compatibility date of the bundle; keep
// it equal to the one in wasm/worker/wrangler.jsonc.
const CompatibilityDate = "2025-09-01"

// CompatibilityFlags are the Workers compatibility flags of the bundle;
// keep them equal to those in wasm/worker/wrangler.jsonc.
// enable_request_signal makes request.signal abort when the client goes
// away, which is how the worker cancels the run of a client that left.
var CompatibilityFlags = []string{"enable_request_signal"}

// Bundle is a built worker: a directory holding the entry module, the
// wasm_exec.js of the Go that built the module, and the module.
type Bundle struct {
	Dir  string
	Size build.Size // of the module
}

// Build compiles the worker module into dir and copies its JavaScript
// next to it. root is the repository root (build.Root).
func Build(ctx context.Context, root, dir string) (*Bundle, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	mod := filepath.Join(dir, ModuleFile)
	if err := build.Module(ctx, root, build.WorkerPkg, mod); err != nil {
		return nil, err
	}
	we, err := build.WasmExec(ctx)
	if err != nil {
		return nil, err
	}
	if err := copyFile(we, filepath.Join(dir, WasmExecFile)); err != nil {
		return nil, err
	}
	if err := copyFile(filepath.Join(root, "wasm", "worker", EntryFile), filepath.Join(dir, EntryFile)); err != nil {
		return nil, err
	}
	size, err := build.SizeOf(mod)
	if err != nil {
		return nil, err
	}
	return &Bundle{Dir: dir, Size: size}, nil
}

// BundleFiles are the files of a bundle Build writes, which a bundle
// copied elsewhere needs.
var BundleFiles = []string{EntryFile, WasmExecFile, ModuleFile}

// TestBundle writes a bundle into dir for a test: a copy of the one in
// the worker directory (build.WorkerDir) of $AGENTRT_DIST when
// build.DistEnv is set and that directory holds BundleFiles (`make test`
// writes it once with `agentrt worker --build-only`), else a fresh Build.
// The copy lets each test write its configuration into its own bundle.
func TestBundle(ctx context.Context, root, dir string) (*Bundle, error) {
	dist := build.Prebuilt()
	if dist == "" {
		return Build(ctx, root, dir)
	}
	src := filepath.Join(dist, build.WorkerDir)
	for _, f := range BundleFiles {
		if fi, err := os.Stat(filepath.Join(src, f)); err != nil || !fi.Mode().IsRegular() {
			return Build(ctx, root, dir)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range BundleFiles {
		if err := copyFile(filepath.Join(src, f), filepath.Join(dir, f)); err != nil {
			return nil, err
		}
	}
	size, err := build.SizeOf(filepath.Join(dir, ModuleFile))
	if err != nil {
		return nil, err
	}
	return &Bundle{Dir: dir, Size: size}, nil
}

// Binary returns the workerd binary installed from the lock file under
// root, or an error saying how to install it.
func Binary(root string) (string, error) {
	p := filepath.Join(root, "node_modules", ".bin", "workerd")
	if _, err := os.Stat(p); err != nil {
		return "", errors.New("workerd: node_modules/.bin/workerd not found: run `npm ci` at the repository root")
	}
	return p, nil
}

// Options configure a local run.
type Options struct {
	// Binary is the workerd executable; empty means Binary(Root).
	Binary string
	// Root is the repository root, used to find the binary.
	Root string
	// Addr is the address to listen on, e.g. "127.0.0.1:8787". Ignored
	// when Listener is set.
	Addr string
	// Listener, if set, is handed to workerd as an open socket, so a
	// test can listen on port 0 first and never race for a port. Start
	// takes a copy of its file; the caller still closes it.
	Listener *net.TCPListener
	// Env are the worker's environment variables and secrets (text
	// bindings), e.g. AGENTRT_TOKEN.
	Env map[string]string
	// AllowLocalNetwork lets the worker fetch local addresses such as
	// 127.0.0.1 (a local OpenAI-compatible server). By default workerd
	// allows only public addresses.
	AllowLocalNetwork bool
	// Entry replaces the entry module's name (a file the caller wrote
	// into the bundle directory), e.g. for a benchmark entry. Empty
	// means EntryFile.
	Entry string
	// Durable runs the durable deployment: AGENTRT_SESSIONS=durable, the
	// Durable Object class DurableClass bound as DurableBinding, with
	// SQLite-backed storage.
	Durable bool
	// StateDir, with Durable, keeps the objects' storage in this
	// directory (created if missing), so that it survives a restart of
	// workerd. Empty keeps it in a temporary directory that Stop removes:
	// workerd's in-memory storage has no SQL API.
	StateDir string
	// Stdout and Stderr receive workerd's output; nil discards it.
	Stdout, Stderr io.Writer
	// V8Flags are V8's command-line flags, set in the configuration's
	// v8Flags (workerd.capnp warns that they are V8's, unstable between
	// its versions). None by default.
	V8Flags []string
}

// The durable deployment's names; keep equal to wasm/worker/worker.mjs
// and wrangler.jsonc.
const (
	// DurableClass is the Durable Object class worker.mjs exports.
	DurableClass = "AgentrtSession"
	// DurableBinding is the namespace binding the Worker routes with.
	DurableBinding = "AGENTRT_SESSION"
	// DurableUniqueKey is the namespace's key, as wrangler names it
	// ("<worker name>-<class>"); the state directory holds a directory
	// of this name.
	DurableUniqueKey = "agentrt-" + DurableClass
	stateService     = "agentrt-state"
)

// Config returns the capnp configuration for a bundle and options.
func Config(o Options) string {
	entry := o.Entry
	if entry == "" {
		entry = EntryFile
	}
	var b strings.Builder
	b.WriteString("# Generated by agentrt: the worker under workerd.\n")
	b.WriteString("using Workerd = import \"/workerd/workerd.capnp\";\n\n")
	b.WriteString("const config :Workerd.Config = (\n  services = [\n    (name = \"main\", worker = .agentrt),\n")
	if o.AllowLocalNetwork {
		b.WriteString("    (name = \"internet\", network = (allow = [\"public\", \"private\", \"local\"])),\n")
	}
	if o.Durable {
		b.WriteString("    (name = \"" + stateService + "\", disk = (path = " + capnpString(o.StateDir) + ", writable = true)),\n")
	}
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:8787"
	}
	b.WriteString("  ],\n  sockets = [(name = \"http\", address = " + capnpString(addr) + ", http = (), service = \"main\")],\n")
	if len(o.V8Flags) > 0 {
		b.WriteString("  v8Flags = [")
		for i, f := range o.V8Flags {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(capnpString(f))
		}
		b.WriteString("],\n")
	}
	b.WriteString(");\n\n")
	b.WriteString("const agentrt :Workerd.Worker = (\n  modules = [\n")
	b.WriteString("    (name = " + capnpString(entry) + ", esModule = embed " + capnpString(entry) + "),\n")
	if entry != EntryFile {
		b.WriteString("    (name = \"" + EntryFile + "\", esModule = embed \"" + EntryFile + "\"),\n")
	}
	b.WriteString("    (name = \"" + WasmExecFile + "\", esModule = embed \"" + WasmExecFile + "\"),\n")
	b.WriteString("    (name = \"" + ModuleFile + "\", wasm = embed \"" + ModuleFile + "\"),\n  ],\n")
	b.WriteString("  compatibilityDate = \"" + CompatibilityDate + "\",\n")
	b.WriteString("  compatibilityFlags = [")
	for i, f := range CompatibilityFlags {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(capnpString(f))
	}
	b.WriteString("],\n")
	env := o.Env
	if o.Durable {
		env = make(map[string]string, len(o.Env)+1)
		for k, v := range o.Env {
			env[k] = v
		}
		env[envvar.Sessions] = "durable"
	}
	if len(env) > 0 || o.Durable {
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		sort.Strings(names)
		b.WriteString("  bindings = [\n")
		for _, k := range names {
			b.WriteString("    (name = " + capnpString(k) + ", text = " + capnpString(env[k]) + "),\n")
		}
		if o.Durable {
			b.WriteString("    (name = \"" + DurableBinding + "\", durableObjectNamespace = \"" + DurableClass + "\"),\n")
		}
		b.WriteString("  ],\n")
	}
	if o.Durable {
		b.WriteString("  durableObjectNamespaces = [(className = \"" + DurableClass + "\", uniqueKey = \"" + DurableUniqueKey + "\", enableSql = true)],\n")
		b.WriteString("  durableObjectStorage = (localDisk = \"" + stateService + "\"),\n")
	}
	b.WriteString(");\n")
	return b.String()
}

// capnpString quotes s as a capnp text literal: UTF-8 is kept, quotes,
// backslashes and control characters are escaped.
func capnpString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Process is a running workerd.
type Process struct {
	// URL is the worker's base URL, e.g. "http://127.0.0.1:8787".
	URL string

	cmd    *exec.Cmd
	exited chan struct{}
	// tempState is the state directory Start made, removed by Stop.
	tempState string
	waitErr   error
	stopOnce  sync.Once
}

// Start writes the configuration into the bundle directory, starts
// workerd, and returns once the worker answers GET /healthz (which also
// starts its Go instance), or with an error when workerd exits first or
// ctx ends. Stop it with Stop; cancelling ctx after Start returns does
// not stop it.
func Start(ctx context.Context, b *Bundle, o Options) (*Process, error) {
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = Binary(o.Root); err != nil {
			return nil, err
		}
	}
	addr := o.Addr
	if o.Listener != nil {
		addr = o.Listener.Addr().String()
	}
	o.Addr = addr
	tempState := ""
	if o.Durable {
		if o.StateDir == "" {
			dir, err := os.MkdirTemp("", "agentrt-state-")
			if err != nil {
				return nil, err
			}
			o.StateDir, tempState = dir, dir
		}
		dir, err := filepath.Abs(o.StateDir)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("workerd: the state directory: %v", err)
		}
		o.StateDir = dir
	}
	if err := os.WriteFile(filepath.Join(b.Dir, ConfigFile), []byte(Config(o)), 0o644); err != nil {
		return nil, err
	}
	args := []string{"serve", ConfigFile}
	cmd := exec.Command(bin, args...)
	cmd.Dir = b.Dir
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	// Its own process group: a Ctrl-C in the terminal reaches agentrt,
	// which stops workerd itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if o.Listener != nil {
		f, err := o.Listener.File()
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.ExtraFiles = []*os.File{f}
		cmd.Args = append(cmd.Args, "--socket-fd", "http=3")
	}
	if err := cmd.Start(); err != nil {
		if tempState != "" {
			_ = os.RemoveAll(tempState)
		}
		return nil, fmt.Errorf("workerd: %v", err)
	}
	p := &Process{URL: "http://" + addr, cmd: cmd, exited: make(chan struct{}), tempState: tempState}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitReady(ctx); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// Pid returns workerd's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// waitReady polls /healthz until it answers 200.
func (p *Process) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 10 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/healthz", nil)
		res, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			return fmt.Errorf("workerd: /healthz answered %s", res.Status)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("workerd exited before serving: %v", p.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Exited is closed when workerd has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop asks workerd to stop (SIGTERM), kills it if it has not exited
// after five seconds, and waits for it. It is safe to call more than once.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	if p.tempState != "" {
		_ = os.RemoveAll(p.tempState)
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return fmt.Errorf("workerd: %s is empty", src)
	}
	return os.WriteFile(dst, b, 0o644)
}
