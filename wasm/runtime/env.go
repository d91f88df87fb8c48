//go:build js && wasm

package main

import _ "unsafe" // for go:linkname

// runtimeEnvs returns the process environment as "KEY=value" strings:
// what syscall.Getenv reads, without package syscall's initialisation
// (its error tables and environment map cost 5 KB of the module's gzip
// size, 0.7%, for this one lookup).
//
//go:linkname runtimeEnvs syscall.runtime_envs
func runtimeEnvs() []string

// getenv returns the value of the environment variable key and whether
// it is set; the first setting of a key repeated wins, as in
// syscall.Getenv.
func getenv(key string) (string, bool) {
	for _, kv := range runtimeEnvs() {
		if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
			return kv[len(key)+1:], true
		}
	}
	return "", false
}
