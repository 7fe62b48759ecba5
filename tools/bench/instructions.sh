#!/usr/bin/env bash
# Instructions per invocation of workload (a) (one LlmAgent, a tool call, then 20 streamed chunks), one
# invocation at a time, chunks paced 1 ms apart, counted by callgrind: the difference between runs of 300 and
# 100 measured invocations, over 200 (the start-up and the warm-up are the same in both and cancel out).
# Instruction counts do not depend on the machine's load, so builds can be compared across runs.
#
#   tools/bench/instructions.sh [BUILD_DIR [AGENT_BENCH_ARGS...]]   # default build/release; prints the count
#   tools/bench/instructions.sh build/release --tracing sink          # what making the spans adds
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
shift || true
extra=("$@")
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is missing (tools/setup.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill ${mock_pid:-} 2>/dev/null || true; rm -rf "$work"' EXIT
printf '{"turns": [{"function_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}, {"chunks": ["w{t} "], "repeat": 20}]}\n' >"$work/script.json"
source tools/listening.sh
start_listening mock-llm "$work/mock.log" "$build/tools/mock_llm/mock-llm" --stamp --chunk-delay-ms 1 --script "$work/script.json"
mock_pid=$listening_pid url=$listening_url
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" "$build/tools/bench/agent_bench" --mock "$url" \
    --workload a --concurrency 1 --invocations "$1" --chunks 20 "${extra[@]}" >/dev/null 2>"$work/vg.$1"
  sed -n 's/^summary: //p' "$work/cg.$1"
}
low=$(count 100)
high=$(count 300)
echo $(( (high - low) / 200 ))
