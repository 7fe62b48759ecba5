#!/usr/bin/env bash
# Sets everything up, builds the release preset and runs a sample agent, which streams its events to the
# terminal.
#   tools/run.sh                              the custom agent (samples/custom_agent)
#   tools/run.sh "your question"              the same, with your words
#   tools/run.sh weather_agent ["question"]   the weather agent: an LlmAgent with a tool (samples/weather_agent)
set -euo pipefail
cd "$(dirname "$0")/.."
sample=custom_agent
if [ $# -gt 0 ] && [ -d "samples/$1" ]; then
  sample=$1
  shift
fi
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target "$sample"
exec "build/release/samples/$sample" "$@"
