#!/usr/bin/env bash
# Runs every Go fuzz target of agentrt for FUZZTIME each (default 60s).
# New interesting inputs stay in Go's cache; copy them into the package's
# testdata/fuzz/ to keep them as regression inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
time="${FUZZTIME:-60s}"
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
		echo "== $pkg $target ($time)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg"
	done
done
# The property tests, in their longer form: more rounds of random faults
# and concurrency than go test's bounded run.
rounds="${PROPERTY_ROUNDS:-300}"
echo "== wasihost TestRuntime_Run_Faults ($rounds rounds)"
AGENTRT_PROPERTY_ROUNDS="$rounds" go test -count=1 -run '^TestRuntime_Run_Faults$' ./wasihost/
