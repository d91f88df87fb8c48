#!/usr/bin/env bash
# `make bench BASE=<rev>` and `make bench-vs [BASE=<rev>]`: this build's
# dist/ side by side with the build of another revision (bench/vs.mjs,
# docs/BENCHMARKS.md "Against another build"). The revision is built once
# in a temporary git worktree, its own dist/, and kept under
# artifacts/vs/<commit>/dist (not committed) for the next run; the
# worktree is removed afterwards. Arguments after the revision go to
# bench/vs.mjs (--short, --pairs N, --json FILE).
#
#   bash scripts/bench-vs.sh df3501d --short
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || [ -z "$1" ]; then
	echo "usage: scripts/bench-vs.sh REV [--short] [--pairs N] [--json FILE]" >&2
	exit 2
fi
base=$1
shift
rev=$(git rev-parse --verify --quiet "$base^{commit}") || {
	echo "bench-vs: $base is not a revision of this repository" >&2
	exit 2
}
if [ ! -f dist/agentrt.wasm ]; then
	echo "bench-vs: dist/agentrt.wasm is missing: run \`make build\` first" >&2
	exit 2
fi
cache=${BENCH_VS_CACHE:-$PWD/artifacts/vs}
dist=$cache/$rev/dist
if [ ! -f "$dist/agentrt.wasm" ] || [ ! -f "$dist/glue.js" ]; then
	tmp=$(mktemp -d)
	trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
	printf '\n== building %s in a temporary worktree\n' "$(git rev-parse --short "$rev")" >&2
	git worktree add --detach "$tmp/src" "$rev" >/dev/null
	# The glue's bundler is the npm package esbuild (npm ci).
	if [ -d node_modules ]; then ln -s "$PWD/node_modules" "$tmp/src/node_modules"; fi
	(cd "$tmp/src" && go run ./cmd/agentrt build) >&2
	mkdir -p "$cache/$rev"
	rm -rf "$dist"
	cp -R "$tmp/src/dist" "$dist"
fi
here=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- . 2>/dev/null || here="$here+changes"
node bench/vs.mjs --base "$dist" --base-label "$(git rev-parse --short "$rev")" --this-label "$here" "$@"
