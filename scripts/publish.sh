#!/usr/bin/env bash
# Publishes the npm package agentrt: builds dist/, runs the package tests
# on it (the tarball installed and run on Node, Bun and Deno, the bundler
# apps), packs it and publishes that very tarball.
#
#   make publish              # npm publish (needs `npm login` first)
#   make publish DRY_RUN=1    # everything but the upload: npm publish --dry-run
#
# Extra arguments to npm publish go in NPM_PUBLISH_FLAGS (e.g. "--tag next").
set -euo pipefail
cd "$(dirname "$0")/.."

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT

go run ./cmd/agentrt pack -dest "$dest"
tgz=$(ls "$dest"/agentrt-*.tgz)

node --test js/package-test/
node --test js/bundlers/progress.test.mjs
node js/bundlers/run.mjs

flags=(${NPM_PUBLISH_FLAGS:-})
if [ -n "${DRY_RUN:-}" ]; then
	flags+=(--dry-run)
fi
npm publish "${flags[@]}" "$tgz"
