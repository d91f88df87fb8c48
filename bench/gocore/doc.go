// Package gocore holds agentrt's native Go benchmarks for `make bench`:
// the same seeding and turns as bench/run.mjs measures in JavaScript, on
// the same generated history, with no wasm or JS crossing (the baseline
// that shows the tax of the boundary), and the Go heap held per stored
// message. Its one non-test function, History, is the workload's
// generator, which the turn driver's benchmarks over wire frames
// (wasm/internal/hostturn) use too.
package gocore
