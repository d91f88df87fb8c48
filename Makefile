# agentrt: the two commands of the README are `make demo` (or
# `go run ./cmd/agentrt demo`) and `make test`.
.PHONY: build package publish demo test test-fast check bench bench-vs fuzz

build:
	go run ./cmd/agentrt build

# The npm package: dist/ packed into agentrt-VERSION.tgz (docs/package.md).
package:
	go run ./cmd/agentrt pack

# Build, test and publish the npm package (scripts/publish.sh): the package
# tests run first, and the tarball they passed on is what npm publishes.
# DRY_RUN=1 does everything but the upload.
publish:
	bash scripts/publish.sh

demo:
	go run ./cmd/agentrt demo

# Every test: Go (native, with the race detector, and the real module under
# wazero), the module and glue suites on Node, Bun and Deno, the npm
# package installed from its tarball, the worker on workerd, and the glue
# suites, agentrt/ai and its example app, the web demo, the shell
# stand-in and the bundlers' apps in browsers (Chromium, Firefox ESR,
# WebKit; scripts/test.sh says which suite runs where). It builds dist/
# once, which every suite then uses, and ends with "suites: N passed,
# N failed".
test:
	bash scripts/test.sh

# The inner loop: dist/ built, Go's tests without -race, the glue suite
# on Node.
test-fast:
	bash scripts/test.sh fast

# Formatting and vet only.
check:
	bash scripts/test.sh check

# With BASE=<rev>, this build side by side with <rev>'s instead
# (scripts/bench-vs.sh, bench/vs.mjs): the hot rows' ratios to the peer,
# interleaved, median and spread over PAIRS pairs (default 10); SHORT=1
# runs the short check of 3 pairs.
VS_ARGS = $(if $(SHORT),--short) $(if $(PAIRS),--pairs $(PAIRS))
bench: build
	@if [ -n "$(BASE)" ]; then bash scripts/bench-vs.sh "$(BASE)" $(VS_ARGS); else bash scripts/bench.sh; fi

# The side-by-side alone, against BASE (default: main), docs/BENCHMARKS.md.
bench-vs: build
	bash scripts/bench-vs.sh "$(or $(BASE),main)" $(VS_ARGS)

# Each fuzz target for FUZZTIME (default 60s).
fuzz:
	bash scripts/fuzz.sh
