#!/usr/bin/env bash
# Sets everything up, builds the release preset and runs the benchmarks in tools/bench.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target adk_bench
build/release/tools/bench/adk_bench "$@"
