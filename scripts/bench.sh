#!/usr/bin/env bash
# `make bench` (after `make build`): the benchmark suite of docs/BENCHMARKS.md.
# It checks the JS peer baseline, runs the native Go core benchmarks and the
# worker's latency benchmark on workerd, builds
# the minimal syscall/js module and a wasm-opt'ed copy of the module for the
# size figures, then runs bench/run.mjs, which prints one table with ratios.
# The table and its figures as JSON are also written to artifacts/.
#
# Environment: AGENTRT_DIST (default dist/), BENCH_WASM_OPT=0 skips
# wasm-opt, BENCH_WORKER=0 skips workerd, BENCH_QUICK=1 runs a short smoke
# pass (no figures), BENCH_ONLY=seed,turn (any of jsmodel, stringify,
# ifhead, seed, turn, cold, heap, size) runs only those sections of the
# harness. When it names none of seed, turn, heap and size, whose rows use
# them, the native Go, workerd, WASI and size steps are skipped:
# BENCH_ONLY=ifhead runs the JS peer's check and the harness's ifhead
# section alone (ifHead on a warm turn, ADR 0025).
#
# Two more sections run on their own: firstturn (bench/firstturn.mjs: import
# to the first answered turn of a 1,000-message seed in a fresh process or
# page per sample, on Node, Bun, Deno, Chromium, Firefox and WebKit, per
# load path, against the JS peer; BENCH_FIRSTTURN_SAMPLES samples per row,
# default 5, BENCH_FIRSTTURN_ENGINES a comma-separated subset) and wasistart
# (bench/wasistart.mjs: the pre-initialized WASI module's start next to
# the plain build's), and aitransport (bench/aitransport.mjs: a warm turn
# through agentrt/ai's transport against rt.stream, in Node and in a page
# of each browser). Without BENCH_ONLY
# they run after the harness; when BENCH_ONLY names only these, nothing
# else runs.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*" >&2; }
dist=${AGENTRT_DIST:-$PWD/dist}
if [ ! -f "$dist/agentrt.wasm" ]; then
	echo "bench: $dist/agentrt.wasm is missing: run \`make build\` first" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p artifacts

only=",${BENCH_ONLY:-},"
want() { [ -z "${BENCH_ONLY:-}" ] || [[ $only == *",$1,"* ]]; }
standalone() {
	if want wasistart; then
		step "WASI module start, pre-initialized and plain (bench/wasistart.mjs)"
		node bench/wasistart.mjs --rounds "${BENCH_WASISTART_ROUNDS:-30}" 2>/dev/null | tee artifacts/wasistart.txt
	fi
	if want aitransport; then
		step "a warm turn through the AI SDK transport against rt.stream (bench/aitransport.mjs)"
		BENCH_JSON=artifacts/aitransport.json node bench/aitransport.mjs | tee artifacts/aitransport.txt
		step "the same turns in a page of each browser (bench/aitransport.mjs --browser)"
		BENCH_JSON=artifacts/aitransport-browser.json node bench/aitransport.mjs --browser | tee artifacts/aitransport-browser.txt
	fi
	if want firstturn; then
		step "cold start to the first answered turn, fresh process or page per sample (bench/firstturn.mjs)"
		BENCH_JSON=artifacts/firstturn.json node bench/firstturn.mjs \
			--engines "${BENCH_FIRSTTURN_ENGINES:-node,bun,deno,chromium,firefox,webkit}" \
			--samples "${BENCH_FIRSTTURN_SAMPLES:-5}" | tee artifacts/firstturn.txt
	fi
}
# BENCH_ONLY of the standalone sections only: run them and stop.
if [ -n "${BENCH_ONLY:-}" ] && [ -z "$(printf '%s' "$BENCH_ONLY" | tr ',' '\n' | grep -vxE 'aitransport|firstturn|wasistart|')" ]; then
	standalone
	exit 0
fi

benchtime=1s
[ "${BENCH_QUICK:-}" = 1 ] && benchtime=20x

step "JS peer correctness (node --test bench/baselines/)"
node --test bench/baselines/ >"$tmp/peer.txt" 2>&1 || { cat "$tmp/peer.txt"; exit 1; }
grep -E '^# (pass|fail)' "$tmp/peer.txt" >&2

# The harness's sections that read none of the steps below (the native Go
# figures, the worker's latency, the WASI module, the size references):
# with BENCH_ONLY naming only these and standalone sections, the harness
# runs at once.
if [ -n "${BENCH_ONLY:-}" ] && [ -z "$(printf '%s' "$BENCH_ONLY" | tr ',' '\n' | grep -vxE 'jsmodel|stringify|ifhead|cold|aitransport|firstturn|wasistart|')" ]; then
	step "harness (bench/run.mjs; BENCH_ONLY=$BENCH_ONLY)"
	AGENTRT_DIST=$dist BENCH_JSON=artifacts/bench.json node --expose-gc bench/run.mjs | tee artifacts/bench.txt
	standalone
	exit 0
fi

step "native Go core (bench/gocore and the turn driver's frames: the harness's history; core: its own)"
go test -run '^$' -bench 'Seed|WarmTurn' -benchmem -benchtime "$benchtime" ./bench/gocore/ ./wasm/internal/hostturn/ >"$tmp/go.txt"
go test -run '^$' -bench 'HeapPerMessage' -benchtime 1x ./bench/gocore/ >>"$tmp/go.txt"
grep -E '^Benchmark' "$tmp/go.txt" >&2
go test -run '^$' -bench . -benchmem -benchtime "$benchtime" ./core/ | grep -E '^Benchmark' | sed 's/^/core: /' >&2

# The worker's per-turn latency on workerd, from the worker's own
# benchmark (one reused Go instance vs a new one per request); the harness
# folds its p50/p99 into the table. BENCH_WORKER=0 skips it.
if [ "${BENCH_WORKER:-1}" != 0 ] && grep -qs 'func BenchmarkWorker_Turn' wasm/worker/workerd/*_test.go; then
	step "worker turn latency on workerd (wasm/worker/workerd)"
	if go test -run '^$' -bench 'BenchmarkWorker_Turn' -benchtime 200x ./wasm/worker/workerd/ >"$tmp/worker.txt" 2>&1; then
		grep -E '^Benchmark' "$tmp/worker.txt" | tee -a "$tmp/go.txt" >&2
	else
		tail -20 "$tmp/worker.txt" >&2
		echo "bench: the worker benchmark failed; its rows are left out" >&2
	fi
fi

# The WASI module under wazero against native core and the GOOS=js module
# under jshost (both its paths), interleaved in one process.
step "WASI module (bench/wasi)"
AGENTRT_BENCH_ROUNDS="${BENCH_WASI_ROUNDS:-5}" go test -run '^$' -bench WASI -benchtime 1x ./bench/wasi/ >&2

# The module's size reference, shared with wasm/runtime/size_test.go.
step "minimal syscall/js module (wasm/runtime/testdata/minimal, flags of internal/build.Module)"
GOOS=js GOARCH=wasm CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/minimal.wasm" ./wasm/runtime/testdata/minimal

opt=
if [ "${BENCH_WASM_OPT:-1}" != 0 ] && [ -x node_modules/.bin/wasm-opt ]; then
	step "wasm-opt -Oz (binaryen from npm; about 15 s)"
	node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-sign-ext \
		--enable-nontrapping-float-to-int "$dist/agentrt.wasm" -o "$tmp/agentrt.opt.wasm"
	opt=$tmp/agentrt.opt.wasm
fi

step "harness (bench/run.mjs)"
AGENTRT_DIST=$dist BENCH_GO=$tmp/go.txt BENCH_MINIMAL=$tmp/minimal.wasm BENCH_OPT=$opt \
	BENCH_JSON=artifacts/bench.json node --expose-gc bench/run.mjs | tee artifacts/bench.txt
standalone
