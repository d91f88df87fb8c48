// Package wasi holds the benchmark of the WASI module for `make bench`:
// seeding 10,000 messages and a warm turn on agentrt-wasi.wasm under
// wazero (wasihost), against native core and against agentrt.wasm under
// jshost (through its fast path, the same wire exports, and through its
// syscall/js API), contenders interleaved in one run, and the two
// modules' gzip sizes. It has no non-test code beyond this comment.
//
//	go test -run '^$' -bench WASI -benchtime 1x ./bench/wasi
package wasi
