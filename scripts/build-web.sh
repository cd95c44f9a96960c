#!/usr/bin/env bash
# Fetches the web dashboard's JavaScript libraries, pinned in
# web/package-lock.json, from npm and copies the files the dashboard serves
# into internal/dashboard/assets/vendor (git-ignored), which go:embed then
# puts into the binary. npm's cache lives in .cache/npm; a second run with
# an unchanged lock file does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
VENDOR=internal/dashboard/assets/vendor
LOCK=web/package-lock.json
STAMP=$VENDOR/.lock.sha256
sum=$(sha256sum "$LOCK" | cut -c1-64)
if [ "$(cat "$STAMP" 2>/dev/null)" = "$sum" ] && [ -f "$VENDOR/uPlot.iife.min.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "build-web: npm is missing: run \`make deps\` (or apt-get install npm) to fetch the dashboard's chart library" >&2
  exit 1
fi
echo "build-web: fetching the dashboard's libraries ($LOCK)"
npm ci --prefix web --ignore-scripts --no-audit --no-fund --cache "$PWD/.cache/npm" >/dev/null
mkdir -p "$VENDOR"
cp web/node_modules/uplot/dist/uPlot.iife.min.js web/node_modules/uplot/dist/uPlot.min.css "$VENDOR/"
cp web/node_modules/uplot/LICENSE "$VENDOR/uPlot.LICENSE"
echo "$sum" > "$STAMP"
