package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemoHandler(t *testing.T) {
	page := t.TempDir()
	dist := t.TempDir()
	mustWrite(t, filepath.Join(page, "index.html"), "<!doctype html><title>demo</title>")
	mustWrite(t, filepath.Join(page, "app.js"), "export {};")
	mustWrite(t, filepath.Join(dist, "agentrt.wasm"), "\x00asm\x01\x00\x00\x00")
	mustWrite(t, filepath.Join(dist, "glue.js"), "export const x = 1;")
	srv := httptest.NewServer(demoHandler(page, dist))
	defer srv.Close()

	tests := []struct {
		name, method, path string
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
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
