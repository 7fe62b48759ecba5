#!/usr/bin/env bash
# Sets everything up, then builds and runs every test: the dev preset (Debug, ASan + UBSan, warnings as
# errors, including the install + find_package test), then the tests that use threads under TSan, then each
# libFuzzer target for a minute (tools/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake --workflow --preset dev
cmake --workflow --preset tsan
tools/fuzz.sh 60
