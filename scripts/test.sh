#!/usr/bin/env bash
# Runs every test of agentrt. `make test` builds dist/ first and calls this.
# Tests that need Chromium, Firefox, workerd, Bun or Deno skip when the tool
# is missing and CI is unset; under CI they fail instead.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "gofmt and go vet"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
GOOS=js GOARCH=wasm go vet ./wasm/...
[ "${1:-}" = check ] && exit 0

step "go test -race (native packages, the module under wazero, the worker)"
go test -race -count=1 ./...

if [ -d node_modules ]; then :; else
	if [ -n "${CI:-}" ]; then echo "node_modules missing: run npm ci" >&2; exit 1; fi
	echo "node_modules missing: skipping the JavaScript suites (run npm ci)"; exit 0
fi

# The JavaScript suites. Each line is one suite; keep them in this order.
step "module suite on Node"
node --test wasm/runtime/test/
step "glue suite on Node (V8)"
node --test js/test/
step "glue types (tsc --strict)"
node_modules/.bin/tsc -p js/test/tsconfig.json
# pinned TOOL ARGS...: runs TOOL (from node_modules) with ARGS; a missing
# tool skips the suite, or fails it under CI.
pinned() {
	if [ -x "$1" ]; then "$@"
	elif [ -n "${CI:-}" ]; then echo "$1 missing: run npm ci" >&2; return 1
	else echo "$1 missing: skipped (run npm ci)"; fi
}
step "glue suite on Bun (JavaScriptCore)"
pinned node_modules/@oven/bun-linux-x64/bin/bun test ./js/test/
step "glue suite on Deno"
pinned node_modules/.bin/deno test -A js/test/
step "web demo in Chromium and Firefox ESR"
node web-demo/test/e2e.mjs
