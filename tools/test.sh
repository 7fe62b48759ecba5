#!/usr/bin/env bash
# Sets everything up, then builds and runs every test: the dev preset (Debug, ASan + UBSan, warnings as
# errors, including the install + find_package test), then the tests that use threads under TSan, then each
# libFuzzer target for 30 s (tools/fuzz.sh; CI has 90 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# tests/fixtures is a verbatim copy of the team's ../shared/fixtures (recorded transcripts nobody edits): say so
# when the team's copy beside the project root has changed.
if [ -d ../shared/fixtures ] && ! diff -rq ../shared/fixtures tests/fixtures >/dev/null; then
  echo "test.sh: tests/fixtures differs from ../shared/fixtures; refresh the copy:" \
    "rm -rf tests/fixtures && cp -r ../shared/fixtures tests/fixtures" >&2
fi
cmake --workflow --preset dev
cmake --workflow --preset tsan
tools/fuzz.sh 30
