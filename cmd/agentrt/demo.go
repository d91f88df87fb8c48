package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
	var hosts hostsFlag
	fs.Var(&hosts, "allow-host", "a Host name to accept besides loopback ones, e.g. a LAN address a phone opens (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	dir := build.InRoot(root, *dist)
	// Take the port first: a busy port fails at once, not after a build.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return listenError(*addr, err)
	}
	defer ln.Close()
	if !*noBuild {
		fmt.Fprintf(os.Stderr, "listening on %s; the page is served once the module is built\n", demoURL(ln.Addr()))
		d, err := buildDist(ctx, dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "built %s (module %s)\n", d.Dir, d.Size)
	}
	if _, err := os.Stat(filepath.Join(dir, "glue.js")); err != nil {
		fmt.Fprintf(os.Stderr, "warning: %s has no glue.js: the page cannot load the runtime\n", dir)
	}

	srv := &http.Server{
		Handler:           demoHandler(filepath.Join(root, "web-demo"), dir, hosts...),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// The test harness reads this line to find the port: keep its shape.
	fmt.Printf("serving the agentrt demo on %s (ready; Ctrl-C stops it)\n", demoURL(ln.Addr()))

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

// listenError says why addr cannot be listened on, naming a busy port
// first.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("port busy: %s is already in use (another demo or worker?); stop it or pass -addr 127.0.0.1:0 for a free port", addr)
	}
	return fmt.Errorf("cannot listen on %s: %v", addr, err)
}

// hostsFlag collects repeated -allow-host flags.
type hostsFlag []string

func (h *hostsFlag) String() string { return strings.Join(*h, ",") }

func (h *hostsFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "/ ") {
		return errors.New("want a host name or IP address, without port or scheme")
	}
	*h = append(*h, strings.ToLower(strings.Trim(s, "[]")))
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

// The security headers of every demo response. The page, its modules and
// the module are same-origin; the model endpoint the user configures can
// be any http(s) origin; WebAssembly compilation needs 'wasm-unsafe-eval'.
const (
	demoCSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
		"img-src 'self' data:; connect-src 'self' http: https:; object-src 'none'; " +
		"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	demoReferrerPolicy = "no-referrer"
)

// demoHandler serves the page from pageDir at / and the built module from
// distDir at /dist/. Responses are not cached, so a reload always runs the
// files on disk. Go's file server sends .wasm as application/wasm, which
// WebAssembly.instantiateStreaming requires.
//
// It answers only requests whose Host is a loopback name (localhost,
// *.localhost, 127.0.0.0/8, ::1) or one of allowHosts: a page on another
// site cannot reach it through DNS rebinding. It lists no directory, and
// every response carries a CSP, frame and referrer policy.
func demoHandler(pageDir, distDir string, allowHosts ...string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/dist/", http.StripPrefix("/dist/", http.FileServer(noListing{http.Dir(distDir)})))
	mux.Handle("/", http.FileServer(noListing{http.Dir(pageDir)}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", demoCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", demoReferrerPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !allowedHost(r.Host, allowHosts) {
			http.Error(w, "forbidden: this server answers only on localhost (see -allow-host)", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Cache-Control", "no-cache")
		mux.ServeHTTP(w, r)
	})
}

// allowedHost reports whether a request's Host header names this machine
// through loopback, or is one of extra.
func allowedHost(hostport string, extra []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, e := range extra {
		if host == e {
			return true
		}
	}
	return false
}

// noListing is a file system whose directories can be opened only when
// they hold an index.html, so the file server serves that page and never
// a listing.
type noListing struct{ fs http.FileSystem }

func (n noListing) Open(name string) (http.File, error) {
	f, err := n.fs.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		index, err := n.fs.Open(path.Join(name, "index.html"))
		if err != nil {
			f.Close()
			return nil, fs.ErrNotExist
		}
		index.Close()
	}
	return f, nil
}
