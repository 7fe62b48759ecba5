#!/usr/bin/env bash
# Sets everything up, builds the release preset and runs the sample agent, which streams its events to
# the terminal. Arguments go to the sample: tools/run.sh "your question"
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target custom_agent
exec build/release/samples/custom_agent "$@"
