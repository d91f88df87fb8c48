#!/usr/bin/env bash
# Says, at the end of `make test` and `make test-fast`, when the change
# being tested touches the hot paths of every JavaScript turn (js/,
# wasm/internal/hostturn, wasm/internal/wasmexport, wire/, core/), and which
# side-by-side check to run before handing it on (docs/BENCHMARKS.md,
# "Before a change is handed on"). The change is what the work tree and
# the branch's commits since it left BASE (default main) hold. It prints
# nothing on BASE itself, outside a git checkout, or when BASE is
# unknown, and it always exits 0: it advises, it does not gate.
set -u
base=${1:-main}
git rev-parse --verify -q "$base^{commit}" >/dev/null 2>&1 || exit 0
from=$(git merge-base HEAD "$base" 2>/dev/null) || exit 0
changed=$( { git diff --name-only "$from" -- ; git ls-files --others --exclude-standard; } 2>/dev/null |
	grep -E '^(js/|wasm/internal/hostturn/|wasm/internal/wasmexport/|wire/|core/)' | grep -vE '(_test\.go|\.test\.mjs)$|^js/test/' | sort -u)
[ -n "$changed" ] || exit 0
n=$(printf '%s\n' "$changed" | wc -l | tr -d ' ')
echo
echo "hot paths: this change touches $n file(s) on every JavaScript turn's path:"
printf '%s\n' "$changed" | head -5 | sed 's/^/  /'
[ "$n" -gt 5 ] && echo "  ..."
if [ "$base" = main ]; then
	echo "Before handing it on, run the side-by-side check: make bench-vs SHORT=1"
else
	echo "Before handing it on, run the side-by-side check: make bench-vs BASE=$base SHORT=1"
fi
echo "(docs/BENCHMARKS.md, \"Before a change is handed on\")."
exit 0
