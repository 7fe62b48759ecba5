#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan and UBSan) and runs each for SECONDS (60 by
# default), starting from the corpus checked in under tests/fuzz/corpus/<target>/. CI runs it with 30; a
# longer hunt is the same command with more:
#
#   tools/fuzz.sh            # each target 60 s
#   tools/fuzz.sh 3600       # each target an hour
#   tools/fuzz.sh 600 sse_parser json_decode
#   tools/fuzz.sh --build-only   # build them, run none (tools/test.sh times the two apart)
#
# Targets run one per core at a time (FUZZ_JOBS=N to choose). What a run finds beyond the seeds goes to
# build/fuzz/found/<target>/ (kept between runs, never checked in). A crash fails the run with libFuzzer's report
# (no target starts after it); the input is saved as build/fuzz/crash/<target>-*, and
# `build/fuzz/tests/fuzz/fuzz_<target> FILE` replays it. Each crashing input becomes a unit test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ "${1:-}" = --build-only ]; then
  cmake --preset fuzz >/dev/null
  exec cmake --build --preset fuzz
fi
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(sse_parser json_decode provider_stream json_schema session_row memory_query request_target api_request agent_config answers http_server mcp_jsonrpc mcp_oauth sandbox_report traceparent a2a_json)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One target per core at a time (FUZZ_JOBS to choose): each target is one process, and CI has two cores.
jobs=${FUZZ_JOBS:-$(nproc)}

fuzz_one() {
  local target=$1 found=build/fuzz/found/$1 log=build/fuzz/$1.log status
  mkdir -p "$found" build/fuzz/crash
  # -rss_limit_mb: a target that grows without bound is a finding too (invariant 2).
  set +e
  build/fuzz/tests/fuzz/fuzz_$target "$found" "tests/fuzz/corpus/$target" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="build/fuzz/crash/$target-" >"$log" 2>&1
  status=$?
  set -e
  if [ "$status" != 0 ]; then
    { tail -n 80 "$log"
      echo "FAIL: fuzz_$target found a crash (exit $status): build/fuzz/crash/, the whole log in $log"; } >&2
    touch "$failures/$target"
    return
  fi
  echo "fuzz: $target ran ${seconds} s: $(grep -E '^(Done|stat::peak_rss_mb)' "$log" | tr '\n' ' ')"
}

# A target that crashes leaves its name in $failures; no target starts after one has.
failures=$(mktemp -d)
trap 'rm -rf "$failures"' EXIT
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  [ -z "$(ls -A "$failures")" ] || break
  fuzz_one "$target" &
done
wait
if [ -n "$(ls -A "$failures")" ]; then
  echo "fuzz: crashed: $(ls "$failures" | tr '\n' ' ')(above)" >&2
  exit 1
fi
echo "fuzz: each target ran ${seconds} s without a crash"
echo "fuzz: ${#targets[@]} passed, 0 failed"
