#!/usr/bin/env bash
# Runs every test suite of agentrt (`make test`), the inner loop's
# (`scripts/test.sh fast`: Go without -race, the glue on Node), or only
# gofmt and vet (`scripts/test.sh check`). It builds dist/ first, runs
# every suite even after one fails, and ends with one line counting
# suites:
#   suites: N passed, N failed
# and exits 1 when any failed.
#
# The modules are built once, by the first suite: dist/ (the npm package)
# and dist/worker/ (the worker's bundle). AGENTRT_DIST then names dist/
# for every suite after it: the Go tests load the modules from there
# instead of linking them again (they build their own when it is unset),
# and the JavaScript suites read it too.
#
# The JavaScript tools are pinned in package.json and installed with
#   PUPPETEER_SKIP_DOWNLOAD=1 npm ci
# Without node_modules the run fails at once and says so. A suite whose
# tool (Chromium, Firefox, workerd, Bun, Deno) is missing skips itself,
# unless CI is set: then it fails.
#
# To add a suite, add a `suite "name" command args...` line below: to
# browser_suites for a suite that drives a browser, else to the main list.
set -uo pipefail
cd "$(dirname "$0")/.."

INSTALL="PUPPETEER_SKIP_DOWNLOAD=1 npm ci"
passed=0
failed=0
failures=()

# Each suite's output is kept while it runs; a suite that fails leaves its
# failing lines (Go's FAIL and panics, TAP's "not ok", data races) in
# digests/, and the summary prints them again at the end, where a CI log
# cut to its last lines still shows which test failed.
logs=$(mktemp -d "${TMPDIR:-/tmp}/agentrt-test.XXXXXX")
mkdir -p "$logs/digests"
suite_count=0

# suite NAME COMMAND...: runs one suite and counts it.
suite() {
	local name=$1 start=$SECONDS out
	shift
	suite_count=$((suite_count + 1))
	out="$logs/$BASHPID.$suite_count.log"
	printf '\n== %s\n' "$name"
	if "$@" 2>&1 | tee "$out"; then
		passed=$((passed + 1))
		printf -- '-- ok: %s (%ds)\n' "$name" $((SECONDS - start))
	else
		failed=$((failed + 1))
		failures+=("$name")
		printf -- '-- FAILED: %s (%ds)\n' "$name" $((SECONDS - start))
		{
			printf 'failed: %s\n' "$name"
			grep -E -- '--- FAIL|^FAIL|^not ok|^panic:|DATA RACE|^# fail|^[[:space:]]+[a-z_]+_test\.go:[0-9]+:' "$out" | head -40
		} >"$logs/digests/$BASHPID.$suite_count"
	fi
	rm -f "$out"
}

# TEST_FILES: how many test files `node --test` runs at once. Its default
# is one fewer than the cores, one file at a time here; the glue's files
# mostly wait on timers, a model's promises and the module's idle time,
# and four at once took the glue suite from 101 s to 71 s on the 2-core
# machine (one run each, one after the other, load averages 5 and 4).
TEST_FILES=${TEST_FILES:-4}

# lane FUNC: starts FUNC, a function of suite lines, in the background:
# its suites run one after another beside those that follow in the
# script, their output held in a file. join_lane waits for them, prints
# their output and counts them.
lane_name=""
lane_pid=""
lane_log=""
lane_counts=""
lane() {
	lane_name=$1
	lane_log=$(mktemp "${TMPDIR:-/tmp}/agentrt-lane.XXXXXX")
	lane_counts=$(mktemp "${TMPDIR:-/tmp}/agentrt-lane.XXXXXX")
	(
		passed=0
		failed=0
		failures=()
		"$1"
		{
			echo "$passed $failed"
			for f in "${failures[@]+"${failures[@]}"}"; do echo "$f"; done
		} >"$lane_counts"
	) >"$lane_log" 2>&1 &
	lane_pid=$!
	printf '\n== %s: started in the background, beside the next suites (output below when done)\n' "$1"
}

# Interrupted (Ctrl-C, a timeout), the suites of a lane, which ignore
# SIGINT as background jobs, end with the script.
trap 'trap - INT TERM; kill -TERM 0' INT TERM

join_lane() {
	[ -n "$lane_pid" ] || return 0
	local start=$SECONDS p="" f="" name
	wait "$lane_pid"
	printf '\n== %s (waited %ds for it)\n' "$lane_name" $((SECONDS - start))
	cat "$lane_log"
	{
		read -r p f
		while IFS= read -r name; do failures+=("$name"); done
	} <"$lane_counts"
	if [ -z "$p" ]; then
		failed=$((failed + 1))
		failures+=("$lane_name: ended before counting its suites")
	else
		passed=$((passed + p))
		failed=$((failed + f))
	fi
	rm -f "$lane_log" "$lane_counts"
	lane_pid=""
}

summary() {
	join_lane
	echo
	if [ -n "$(ls -A "$logs/digests")" ]; then
		echo "== what the failed suites printed on failing:"
		cat "$logs/digests/"*
		echo
	fi
	rm -rf "$logs"
	for f in "${failures[@]+"${failures[@]}"}"; do echo "failed: $f"; done
	echo "suites: $passed passed, $failed failed"
	bash scripts/hot-paths-hint.sh
	[ "$failed" -eq 0 ]
}

fmt_and_vet() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null)
	if [ -n "$unformatted" ]; then
		echo "gofmt would change:"
		echo "$unformatted"
		return 1
	fi
	go vet ./... && GOOS=js GOARCH=wasm go vet ./wasm/... &&
		GOOS=wasip1 GOARCH=wasm go vet ./wasm/wasi/... ./wasm/internal/wasmexport
}

# pinned TOOL ARGS...: runs TOOL (from node_modules) with ARGS; a missing
# tool skips the suite, or fails it under CI.
pinned() {
	if [ -x "$1" ]; then
		"$@"
	elif [ -n "${CI:-}" ]; then
		echo "$1 missing: run $INSTALL" >&2
		return 1
	else
		echo "$1 missing: skipped (run $INSTALL)"
	fi
}

# build_dist builds the modules every suite after it uses: dist/ afresh
# (a failed build leaves no stale module behind) and the worker's bundle
# in dist/worker/.
build_dist() {
	rm -rf dist && go run ./cmd/agentrt build && go run ./cmd/agentrt worker --build-only
}

# host_suites prints the glue's suites that reach the host's own APIs:
# those the browser page leaves out for needing Node's (node:http,
# node:wasi, child processes; js/test/browser/run.mjs --list-excluded),
# which Bun and Deno provide their own way, and worker.test.mjs, whose
# path for a host without Web Workers tells Bun and Deno apart.
host_suites() {
	local files f
	files=$(node js/test/browser/run.mjs --list-excluded) || return 1
	if [ -z "$files" ]; then
		echo "js/test/browser/run.mjs listed no suite" >&2
		return 1
	fi
	for f in $files worker.test.mjs; do echo "./js/test/$f"; done
}

glue_on_bun() {
	local files
	files=$(host_suites) || return 1
	pinned node_modules/@oven/bun-linux-x64/bin/bun test $files
}

glue_on_deno() {
	local files
	files=$(host_suites) || return 1
	pinned node_modules/.bin/deno test -A $files
}

# Which engines run what. Each suite runs on the engines that have a path
# of their own in it, and on no more:
# - The glue suite runs whole on Node (V8). Bun (JavaScriptCore) and Deno
#   (V8) run the suites of their own host APIs (host_suites): every other
#   suite runs on JavaScriptCore in WebKit's page and on V8 on Node, and
#   the npm package suite loads the installed package on Bun and Deno.
# - The glue suites in a page run whole in Firefox ESR (SpiderMonkey,
#   which runs nothing else of the glue's). WebKit (JavaScriptCore in a
#   browser, as iOS's webviews) runs those of run.mjs's EVERY_ENGINE,
#   whose paths go through a browser API each engine has its own way
#   (worker mode's Web Worker and postMessage); the others drive the Go
#   module through the glue and fail the same in any engine (ADR 0024,
#   "Test time"). Chromium's V8 runs them on Node; Chromium keeps the
#   demo, the shell stand-in and every bundler app.
# - The shell stand-in runs in Chromium and WebKit, the engines of the
#   webviews it stands in for (Android's and iOS's, docs/webview.md).
#   Firefox's side of its strict policy runs in the bundlers suite's
#   Capacitor-style app.
# - Shared mode keeps the three browsers: each engine has a SharedWorker,
#   a page lifecycle and a module worker's import of its own.
# - The web demo keeps the three browsers: it is the only suite that
#   streams a model's answer over each browser's own fetch (the OpenAI
#   client's suite needs node:http and runs outside browsers), and stops
#   one mid-stream.
# The browser suites drive a browser that works on one core while the
# driver waits: they run as one lane in the background (lane), beside the
# Go tests and the Node, Bun and Deno suites.
browser_suites() {
	suite "web demo in Chromium, Firefox ESR and WebKit" node web-demo/test/e2e.mjs
	suite "glue suites in a page of Firefox ESR (whole) and WebKit (worker mode's)" node js/test/browser/run.mjs --browsers firefox,webkit --whole firefox
	suite "shell stand-in (strict CSP, bridge, kill, cold seed) in Chromium and WebKit" node web-demo/test/shell.mjs --browsers chromium,webkit
	suite "agentrt/ai with the AI SDK in a page of Chromium, Firefox ESR and WebKit, main thread and worker mode" node js/test/browser/ai.mjs
	suite "shared mode: two pages, one SharedWorker runtime (watch, reload and reconnect, a stale ifHead merged and retried, the fallback) in Chromium, Firefox ESR and WebKit" node js/test/browser/shared.mjs
	suite "AI SDK example (useChat, worker mode): send, tool, approve, deny, reload, regenerate in Chromium, Firefox ESR and WebKit" node examples/ai-sdk-react/test/e2e.mjs
	suite "bundlers: the tarball in Vite, webpack, Rollup, Parcel and esbuild apps, the Vite dev server and a CDN origin; turn, reload, cold seed in Chromium (Vite, and Vite as a Capacitor-style app, also Firefox ESR and WebKit)" node js/bundlers/run.mjs
}

if [ "${1:-}" = check ]; then
	suite "gofmt and go vet" fmt_and_vet
	summary
	exit
fi

# `scripts/test.sh browsers` runs the browser suites alone, in the
# foreground, on the dist/ already built (or $AGENTRT_DIST).
if [ "${1:-}" = browsers ]; then
	browser_suites
	summary
	exit
fi

if [ ! -d node_modules ] || [ ! -x node_modules/.bin/tsc ]; then
	echo "node_modules is missing or incomplete: the JavaScript suites cannot run." >&2
	echo "Install the pinned tools, then run make test again:" >&2
	echo "  $INSTALL" >&2
	failures+=("JavaScript tools not installed")
	failed=1
	summary
	exit 1
fi

# The Go tests of `scripts/test.sh fast`, in a lane beside the glue on
# Node, which works on one core.
fast_go() {
	suite "go test (no -race)" go test -count=1 -parallel 4 ./...
}

if [ "${1:-}" = fast ]; then
	suite "build dist/ and the worker's bundle" build_dist
	export AGENTRT_DIST=$PWD/dist
	lane fast_go
	suite "glue suite on Node (V8)" node --test --test-concurrency=$TEST_FILES js/test/*.test.mjs
	summary
	exit
fi

suite "gofmt and go vet" fmt_and_vet
suite "build dist/ and the worker's bundle" build_dist
export AGENTRT_DIST=$PWD/dist
# The browser lane starts before the Go tests: both wait more than they
# work (browsers driven over WebDriver, workerd and wazero processes
# started and stopped), and a clean clone's run used two cores for 60% of
# its time with the lane started after them.
# The lane is the browser suites alone: the Deno and npm package suites,
# which ran in it after them while the main list was the longer, went back
# to the main list when the long memory-pressure run left the glue's suite
# for the module's (a clean clone's run had the main list wait 38 s for
# the lane before; the cut took about 95 s from the main list).
lane browser_suites
suite "go test -race (native packages, the module under wazero, the worker)" go test -race -count=1 -parallel 4 ./...
suite "module suite on Node" node --test --test-concurrency=$TEST_FILES wasm/runtime/test/
suite "glue suite on Node (V8)" node --test --test-concurrency=$TEST_FILES js/test/*.test.mjs
suite "glue types (tsc --strict)" node_modules/.bin/tsc -p js/test/tsconfig.json
suite "glue suite on Bun (JavaScriptCore): the suites of its host's APIs" glue_on_bun
suite "glue suite on Deno: the suites of its host's APIs" glue_on_deno
suite "npm package: packed, installed and run on Node, Bun and Deno; strict types" node --test js/package-test/
suite "docs: contract.md's event list against the module's events" node --test js/docs-test/
suite "load progress over HTTP (streamed, compressed, octet-stream)" node --test js/bundlers/progress.test.mjs
suite "static server of the browser suites (malformed paths, mounts)" node --test web-demo/test/server.test.mjs
suite "the side-by-side benchmark's arguments and table (bench/vs.mjs; Node only, so not in js/test/, whose files also run in a page)" node --test bench/vs.test.mjs
suite "the harness's ifhead section: its contenders on the built module and its table (bench/ifhead.mjs; Node only)" node --test bench/ifhead.test.mjs

summary
