package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDemoHandler(t *testing.T) {
	page := t.TempDir()
	dist := t.TempDir()
	mustWrite(t, filepath.Join(page, "index.html"), "<!doctype html><title>demo</title>")
	mustWrite(t, filepath.Join(page, "app.js"), "export {};")
	mustWrite(t, filepath.Join(dist, "agentrt.wasm"), "\x00asm\x01\x00\x00\x00")
	mustWrite(t, filepath.Join(dist, "glue.js"), "export const x = 1;")
	os.MkdirAll(filepath.Join(page, "test"), 0o755)
	mustWrite(t, filepath.Join(page, "test", "e2e.mjs"), "export {};")
	os.MkdirAll(filepath.Join(dist, "worker"), 0o755)
	mustWrite(t, filepath.Join(dist, "worker", "worker.mjs"), "export {};")
	os.MkdirAll(filepath.Join(page, "docs"), 0o755)
	mustWrite(t, filepath.Join(page, "docs", "index.html"), "<!doctype html><title>docs</title>")
	srv := httptest.NewServer(demoHandler(page, dist, "192.168.1.20"))
	defer srv.Close()

	tests := []struct {
		name, method, path string
		host               string // the Host header; empty: the server's address
		status             int
		contentType        string // prefix; empty: not checked
	}{
		// Ensure the page is served at /.
		{name: "OK index", method: "GET", path: "/", status: 200, contentType: "text/html"},
		// Ensure modules are served as JavaScript.
		{name: "OK app.js", method: "GET", path: "/app.js", status: 200, contentType: "text/javascript"},
		// Ensure the module is application/wasm (instantiateStreaming needs it).
		{name: "OK wasm", method: "GET", path: "/dist/agentrt.wasm", status: 200, contentType: "application/wasm"},
		// Ensure dist/ is mounted at /dist/.
		{name: "OK glue", method: "GET", path: "/dist/glue.js", status: 200, contentType: "text/javascript"},
		// Ensure HEAD works.
		{name: "OK head", method: "HEAD", path: "/dist/agentrt.wasm", status: 200},
		// Ensure unknown files are 404.
		{name: "ErrNotFound", method: "GET", path: "/nope.js", status: 404},
		// Ensure the dist files are not reachable from the page root.
		{name: "ErrDistAtRoot", method: "GET", path: "/agentrt.wasm", status: 404},
		// Ensure paths cannot climb out of the served directories.
		{name: "ErrTraversal", method: "GET", path: "/dist/../../etc/passwd", status: 404},
		// Ensure writes are refused.
		{name: "ErrMethod", method: "POST", path: "/", status: 405},
		// Ensure no directory is listed, at /dist/ or anywhere.
		{name: "ErrListDist", method: "GET", path: "/dist/", status: 404},
		{name: "ErrListDistSub", method: "GET", path: "/dist/worker/", status: 404},
		{name: "ErrListTest", method: "GET", path: "/test/", status: 404},
		{name: "ErrListTestNoSlash", method: "GET", path: "/test", status: 404},
		// Ensure files in those directories are still served.
		{name: "OK file under test", method: "GET", path: "/test/e2e.mjs", status: 200},
		// Ensure a directory with an index.html serves the page.
		{name: "OK dir with index", method: "GET", path: "/docs/", status: 200, contentType: "text/html"},
		// Ensure loopback Host names are accepted.
		{name: "OK host localhost", method: "GET", path: "/", host: "localhost:8080", status: 200},
		{name: "OK host sub.localhost", method: "GET", path: "/", host: "demo.localhost", status: 200},
		{name: "OK host 127.0.0.1", method: "GET", path: "/", host: "127.0.0.1", status: 200},
		{name: "OK host 127.1.2.3", method: "GET", path: "/", host: "127.1.2.3:1", status: 200},
		{name: "OK host ::1", method: "GET", path: "/", host: "[::1]:8080", status: 200},
		{name: "OK host LOCALHOST.", method: "GET", path: "/", host: "LOCALHOST.:8080", status: 200},
		// Ensure a host named by -allow-host is accepted.
		{name: "OK host allowed", method: "GET", path: "/", host: "192.168.1.20:8080", status: 200},
		// Ensure any other Host is refused (DNS rebinding).
		{name: "ErrHostOther", method: "GET", path: "/", host: "evil.example:8080", status: 403},
		{name: "ErrHostLookalike", method: "GET", path: "/dist/agentrt.wasm", host: "localhost.evil.example", status: 403},
		{name: "ErrHostLANNotAllowed", method: "GET", path: "/", host: "10.0.0.5", status: 403},
		{name: "ErrHostZero", method: "GET", path: "/", host: "0.0.0.0:8080", status: 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status: got %d, want %d", res.StatusCode, tc.status)
			}
			if ct := res.Header.Get("Content-Type"); tc.contentType != "" && !strings.HasPrefix(ct, tc.contentType) {
				t.Fatalf("Content-Type: got %q, want %q", ct, tc.contentType)
			}
			if tc.status == 200 && res.Header.Get("Cache-Control") != "no-cache" {
				t.Fatalf("Cache-Control: got %q, want no-cache", res.Header.Get("Cache-Control"))
			}
			// Ensure every response, errors included, carries the policies.
			for name, want := range map[string]string{
				"Content-Security-Policy": demoCSP,
				"X-Frame-Options":         "DENY",
				"Referrer-Policy":         "no-referrer",
				"X-Content-Type-Options":  "nosniff",
			} {
				if got := res.Header.Get(name); got != want {
					t.Fatalf("%s: got %q, want %q", name, got, want)
				}
			}
			if !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
				t.Fatal("the CSP does not forbid framing")
			}
		})
	}
}

// Ensure a path with a malformed percent-escape is a bad request (400),
// and odd but well-formed escapes (NUL, invalid UTF-8, encoded dots and
// slashes) are not found (404): none is a server error. The request line
// is written by hand, since a Go client refuses to send such paths.
func TestDemoHandler_MalformedPath(t *testing.T) {
	page := t.TempDir()
	dist := t.TempDir()
	mustWrite(t, filepath.Join(page, "index.html"), "<!doctype html><title>demo</title>")
	mustWrite(t, filepath.Join(dist, "agentrt.wasm"), "\x00asm\x01\x00\x00\x00")
	srv := httptest.NewServer(demoHandler(page, dist))
	defer srv.Close()
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/%E0%A4%A", 400},
		{"/%zz", 400},
		{"/%", 400},
		{"/dist/%E0%A4%A", 400},
		{"/%E0%A4", 404},
		{"/%00", 404},
		{"/dist/a%00b", 404},
		{"/%C0%AE%C0%AE/", 404},
		{"/%2e%2e/%2e%2e/etc/passwd", 404},
		{"/dist/..%2f..%2fetc%2fpasswd", 404},
		{"/dist/agentrt%2Ewasm", 200},
	} {
		t.Run(tc.path, func(t *testing.T) {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(c, "GET "+tc.path+" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status: got %d, want %d", res.StatusCode, tc.status)
			}
		})
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDemoURL(t *testing.T) {
	tests := []struct {
		name string
		addr net.Addr
		want string
	}{
		// Ensure a loopback listener prints its own address.
		{name: "OK loopback", addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, want: "http://127.0.0.1:8080/"},
		// Ensure a listener on every interface prints a URL a browser can open.
		{name: "OK unspecified v4", addr: &net.TCPAddr{IP: net.IPv4zero, Port: 9000}, want: "http://127.0.0.1:9000/"},
		{name: "OK unspecified v6", addr: &net.TCPAddr{IP: net.IPv6unspecified, Port: 9000}, want: "http://127.0.0.1:9000/"},
		// Ensure IPv6 hosts are bracketed.
		{name: "OK v6", addr: &net.TCPAddr{IP: net.IPv6loopback, Port: 1}, want: "http://[::1]:1/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := demoURL(tc.addr); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
