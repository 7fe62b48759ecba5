#!/usr/bin/env bash
# Fetches the ADK web UI (the static files of the npm package @google/adk-devtools, dist/browser/) into the
# cache folder where `adk web` looks for it, and prints that folder. `npm pack` of the one package is enough:
# nothing is installed and no other package is fetched. Safe to run again: a complete copy is kept.
#   tools/fetch_web_ui.sh            -> ${ADK_CACHE_DIR:-~/.cache/adk-cpp}/adk-devtools-2.0.0/browser
# Exits 1 with the reason when npm is missing or the registry cannot be reached.
set -euo pipefail
version=2.0.0
cache=${ADK_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/adk-cpp}
target="$cache/adk-devtools-$version"
if [ -f "$target/browser/index.html" ]; then
  echo "$target/browser"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "fetch_web_ui: npm is not installed (tools/setup.sh installs it)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && timeout 300 npm pack --silent "@google/adk-devtools@$version" >pack.log 2>&1); then
  echo "fetch_web_ui: npm pack @google/adk-devtools@$version failed:" >&2
  cat "$work/pack.log" >&2
  exit 1
fi
tar -xzf "$work"/google-adk-devtools-*.tgz -C "$work" package/dist/browser
if [ ! -f "$work/package/dist/browser/index.html" ]; then
  echo "fetch_web_ui: the package has no dist/browser/index.html" >&2
  exit 1
fi
mkdir -p "$cache"
rm -rf "$target.tmp"
mkdir -p "$target.tmp"
mv "$work/package/dist/browser" "$target.tmp/browser"
rm -rf "$target"
mv "$target.tmp" "$target"  # whole or not at all: a run cut short leaves no half copy
echo "$target/browser"
