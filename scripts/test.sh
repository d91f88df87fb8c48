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
# To add a suite, add a `suite "name" command args...` line below.
set -uo pipefail
cd "$(dirname "$0")/.."

INSTALL="PUPPETEER_SKIP_DOWNLOAD=1 npm ci"
passed=0
failed=0
failures=()

# suite NAME COMMAND...: runs one suite and counts it.
suite() {
	local name=$1 start=$SECONDS
	shift
	printf '\n== %s\n' "$name"
	if "$@"; then
		passed=$((passed + 1))
		printf -- '-- ok: %s (%ds)\n' "$name" $((SECONDS - start))
	else
		failed=$((failed + 1))
		failures+=("$name")
		printf -- '-- FAILED: %s (%ds)\n' "$name" $((SECONDS - start))
	fi
}

summary() {
	echo
	for f in "${failures[@]+"${failures[@]}"}"; do echo "failed: $f"; done
	echo "suites: $passed passed, $failed failed"
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
	go vet ./... && GOOS=js GOARCH=wasm go vet ./wasm/... ./internal/jsutil &&
		GOOS=wasip1 GOARCH=wasm go vet ./wasm/wasi/... ./internal/wasmexport
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

if [ "${1:-}" = check ]; then
	suite "gofmt and go vet" fmt_and_vet
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

if [ "${1:-}" = fast ]; then
	suite "build dist/ and the worker's bundle" build_dist
	export AGENTRT_DIST=$PWD/dist
	suite "go test (no -race)" go test -count=1 ./...
	suite "glue suite on Node (V8)" node --test js/test/*.test.mjs
	summary
	exit
fi

suite "gofmt and go vet" fmt_and_vet
suite "build dist/ and the worker's bundle" build_dist
export AGENTRT_DIST=$PWD/dist
suite "go test -race (native packages, the module under wazero, the worker)" go test -race -count=1 ./...
suite "module suite on Node" node --test wasm/runtime/test/
suite "glue suite on Node (V8)" node --test js/test/*.test.mjs
suite "glue types (tsc --strict)" node_modules/.bin/tsc -p js/test/tsconfig.json
suite "glue suite on Bun (JavaScriptCore)" pinned node_modules/@oven/bun-linux-x64/bin/bun test ./js/test/
suite "glue suite on Deno" pinned node_modules/.bin/deno test -A js/test/
suite "npm package: packed, installed and run on Node, Bun and Deno; strict types" node --test js/package-test/
suite "docs: contract.md's event list against the module's events" node --test js/docs-test/
suite "load progress over HTTP (streamed, compressed, octet-stream)" node --test js/bundlers/progress.test.mjs
suite "static server of the browser suites (malformed paths, mounts)" node --test web-demo/test/server.test.mjs
suite "web demo in Chromium, Firefox ESR and WebKit" node web-demo/test/e2e.mjs
suite "glue suites in a page of Chromium, Firefox ESR and WebKit" node js/test/browser/run.mjs
suite "shell stand-in (strict CSP, bridge, kill, cold seed) in Chromium, Firefox ESR and WebKit" node web-demo/test/shell.mjs
suite "bundlers: the tarball in Vite, webpack, Rollup, Parcel and esbuild apps, the Vite dev server and a CDN origin; turn, reload, cold seed in Chromium (Vite, and Vite as a Capacitor-style app, also Firefox ESR and WebKit)" node js/bundlers/run.mjs

summary
