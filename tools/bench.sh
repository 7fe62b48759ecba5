#!/usr/bin/env bash
# Every benchmark, one command: builds the release preset, runs the micro-benchmarks (tools/bench/adk_bench,
# tools/bench/codec_bench), then adk-cpp against Google's TypeScript ADK on the agent workloads
# (tools/bench/compare.sh, which installs @google/adk from npm and starts mock-llm), then streaming at a model's
# pace beside @google/adk-devtools' server (tools/bench/pace.sh), what a paced chunk costs in instructions and
# cache misses beside the floor (tools/bench/chunk_misses.sh), bursts in process and served, in CPU time
# (tools/bench/bursts.sh) and in instructions and cache misses (tools/bench/burst_counts.sh), A2A tasks beside the TypeScript ADK's A2A server (tools/bench/a2a.sh), and what tracing
# costs (tools/bench/tracing.sh).
#   tools/bench.sh           the full run (about an hour on 2 cores: pace.sh opens up to 10,000 streams)
#   tools/bench.sh quick     fewer rounds and invocations, a smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target adk_bench codec_bench agent_bench mock-llm >/dev/null
rounds=5
[ "${1:-}" = quick ] && rounds=1
echo "## Micro-benchmarks (one thread)"
build/release/tools/bench/adk_bench "$rounds"
build/release/tools/bench/codec_bench "$rounds"
echo
echo "## Agent workloads: adk-cpp and the TypeScript ADK against one mock-llm"
tools/bench/compare.sh "${1:-}"
echo
echo "## Streaming at a model's pace: adk-cpp's server and the TypeScript ADK's"
tools/bench/pace.sh "${1:-}"
echo
echo "## A paced chunk in instructions and cache misses (callgrind), adk-cpp's server and the floor"
if [ "${1:-}" = quick ]; then STREAMS=100 WINDOW_SECONDS=5 tools/bench/chunk_misses.sh; else tools/bench/chunk_misses.sh; fi
echo
echo "## Bursts: the runtime in process and behind its HTTP API, at concurrency 50 and 1,000"
tools/bench/bursts.sh "${1:-}"
if [ "${1:-}" = quick ]; then INVOCATIONS=200 WARMUP=100 tools/bench/burst_counts.sh; else tools/bench/burst_counts.sh; fi
echo
echo "## A2A: tasks streamed by adk-cpp's server and the TypeScript ADK's (adk api_server --a2a)"
tools/bench/a2a.sh "${1:-}"
echo
echo "## Tracing: off, spans made, spans exported over OTLP (in process, concurrency 50)"
tools/bench/tracing.sh "$([ "${1:-}" = quick ] && echo 1 || echo 3)"
