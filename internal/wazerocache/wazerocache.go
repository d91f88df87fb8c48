// Package wazerocache holds the process-wide wazero compilation caches
// that jshost and wasihost share, one per directory, so that both hosts
// compile a module once per process and reuse the compiled code on disk
// across processes.
package wazerocache

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
)

// DefaultDir is where compiled modules are cached by default: the
// directory agentrt-wazero under os.UserCacheDir, or "" (an in-memory
// cache) when there is no user cache directory.
func DefaultDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "agentrt-wazero")
}

var (
	mu     sync.Mutex
	caches = map[string]wazero.CompilationCache{}
)

// For returns the process-wide compilation cache of dir; "" or a
// directory that cannot be used gives an in-memory cache.
func For(dir string) wazero.CompilationCache {
	mu.Lock()
	defer mu.Unlock()
	if c, ok := caches[dir]; ok {
		return c
	}
	var c wazero.CompilationCache
	if dir != "" {
		if cc, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			c = cc
		}
	}
	if c == nil {
		c = wazero.NewCompilationCache()
	}
	caches[dir] = c
	return c
}
