#!/usr/bin/env bash
# Sets everything up, then builds and runs every test: the dev preset (Debug, ASan + UBSan, warnings as
# errors, including the install + find_package test), then the tests that use threads under TSan, then each
# libFuzzer target for 30 s (tools/fuzz.sh; CI has 90 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
# A full run on a clean clone writes about 11 GiB under build/ (measured 2026-12-05: dev 8.9, fuzz 1.1, tsan 0.6;
# ASan's and UBSan's builds are large) and 1-2 more to ccache's cache. Said at once when the disk has less room,
# not an hour in as "No space left on device"; the trees this run rebuilds count as room.
need_gib=14
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
built_kib=$({ du -skc build/dev build/tsan build/fuzz 2>/dev/null || true; } | awk 'END { print $1 + 0 }')
if [ $(((free_kib + built_kib) / 1024 / 1024)) -lt "$need_gib" ]; then
  echo "test.sh: $((free_kib / 1024 / 1024)) GiB free on this disk; a full run needs about $need_gib GiB (the dev, tsan" \
    "and fuzz trees under build/, and ccache's cache). Free some (old clones or build trees; \`ccache -C\` empties" \
    "the compiler's cache) and run again." >&2
  exit 1
fi
# Each stage's time, printed when the run ends (passed or not): what a cold CI spends where.
stage_times=()
run_started=$SECONDS
current_stage=""
print_stage_times() {
  local status=$?
  { echo "test.sh: stage times (exit $status):"
    for line in "${stage_times[@]}"; do echo "  $line"; done
    [ -z "$current_stage" ] || echo "  $current_stage: failed after $((SECONDS - stage_started)) s"
    echo "  total $(((SECONDS - run_started) / 60)) min $(((SECONDS - run_started) % 60)) s"; } >&2
}
trap print_stage_times EXIT
stage() {
  current_stage=$1
  stage_started=$SECONDS
  shift
  "$@"
  stage_times+=("$(printf '%-22s %4d min %2d s' "$current_stage" $(((SECONDS - stage_started) / 60)) \
    $(((SECONDS - stage_started) % 60)))")
  current_stage=""
}
stage setup tools/setup.sh
# tests/fixtures is a verbatim copy of the team's ../shared/fixtures (recorded transcripts nobody edits): say so
# when the team's copy beside the project root has changed.
if [ -d ../shared/fixtures ] && ! diff -rq ../shared/fixtures tests/fixtures >/dev/null; then
  echo "test.sh: tests/fixtures differs from ../shared/fixtures; refresh the copy:" \
    "rm -rf tests/fixtures && cp -r ../shared/fixtures tests/fixtures" >&2
fi
stage "dev: configure" cmake --preset dev
stage "dev: build" cmake --build --preset dev
stage "dev: test" ctest --preset dev
stage "tsan: configure" cmake --preset tsan
stage "tsan: build" cmake --build --preset tsan
stage "tsan: test" ctest --preset tsan
stage "fuzz: build" tools/fuzz.sh --build-only
stage "fuzz: run (30 s each)" tools/fuzz.sh 30
