package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agentrt/agentrt/internal/build"
)

func init() {
	register(command{name: "demo", summary: "build dist/ and serve the web demo", run: runDemo})
}

// runDemo builds the module into dist/ (or -dist) and serves the web demo:
// web-demo/ at / and the built files at /dist/. It prints the URL it
// actually listens on (useful with a port of 0) and stops when ctx is done.
func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	dist := fs.String("dist", "dist", "directory to build the module into and serve at /dist/, relative to the repository root")
	noBuild := fs.Bool("no-build", false, "serve -dist as it is, without building it first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	root, err := build.Root()
	if err != nil {
		return err
	}
	dir := build.InRoot(root, *dist)
	if !*noBuild {
		d, err := build.Build(ctx, root, dir)
		if err != nil {
			return err
		}
		fmt.Printf("built %s (module %s)\n", d.Dir, d.Size)
	}
	if _, err := os.Stat(filepath.Join(dir, "glue.js")); err != nil {
		fmt.Fprintf(os.Stderr, "warning: %s has no glue.js: the page cannot load the runtime\n", dir)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           demoHandler(filepath.Join(root, "web-demo"), dir),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// The test harness reads this line to find the port: keep its shape.
	fmt.Printf("serving the agentrt demo on %s\n", demoURL(ln.Addr()))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// demoURL is the URL to open for a listener's address. A listener on
// every interface is reached through the loopback address.
func demoURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String() + "/"
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port)) + "/"
}

// demoHandler serves the page from pageDir at / and the built module from
// distDir at /dist/. Responses are not cached, so a reload always runs the
// files on disk. Go's file server sends .wasm as application/wasm, which
// WebAssembly.instantiateStreaming requires.
func demoHandler(pageDir, distDir string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/dist/", http.StripPrefix("/dist/", http.FileServer(http.Dir(distDir))))
	mux.Handle("/", http.FileServer(http.Dir(pageDir)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}
