#!/usr/bin/env bash
# Runs every Go fuzz target of agentrt for FUZZTIME each (default 60s), then
# the JavaScript driver's property test in its longer form.
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

# The JavaScript driver's property test (js/test/property.test.mjs), in its
# longer form: PROPERTY_BATCHES batches of random faults (default 200).
if [ -f "${AGENTRT_DIST:-dist}/agentrt.wasm" ]; then
	echo "== js/test/property.test.mjs (AGENTRT_PROPERTY_BATCHES=${PROPERTY_BATCHES:-200})"
	AGENTRT_PROPERTY_BATCHES="${PROPERTY_BATCHES:-200}" node --test js/test/property.test.mjs
else
	echo "fuzz: ${AGENTRT_DIST:-dist}/agentrt.wasm is missing: run \`make build\` for the driver's property test" >&2
	exit 2
fi
