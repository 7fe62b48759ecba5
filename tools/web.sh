#!/usr/bin/env bash
# Chat with the sample agents (samples/agents) in the ADK web UI at http://127.0.0.1:8000/dev-ui/. Installs
# what is missing, fetches the UI, builds the release preset's sample_agents and mock-llm, then serves.
# Without a provider's key mock-llm plays the models, offline; with GEMINI_API_KEY (or GOOGLE_API_KEY) set
# the samples ask Gemini, and ADK_MODEL (with its provider's key) gives every agent that model instead.
#   tools/web.sh                          # then open http://127.0.0.1:8000/dev-ui/
#   tools/web.sh --port 9000              # any flag of `web` (tools/web.sh --help lists them)
#   ADK_MODEL=openai/gpt-4o-mini OPENAI_API_KEY=... tools/web.sh
# The apps are resumable (refund_desk asks a person). Sessions are kept in .adk/sessions.db; Ctrl-C stops.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target sample_agents mock-llm
program=build/release/samples/sample_agents
if [ "${1:-}" = --help ]; then
  exec "$program" web --help
fi
args=(--resumable)  # refund_desk asks a person, and a question waits in a resumable app
pids=()
# Ctrl-C, a kill of this script or its end stops the server and mock-llm with it.
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
if [ -n "${ADK_MODEL:-}" ]; then
  args+=(--model "$ADK_MODEL")
elif [ -z "${GEMINI_API_KEY:-}${GOOGLE_API_KEY:-}" ]; then
  mkdir -p .adk
  source tools/listening.sh
  start_listening mock-llm .adk/mock-llm.log build/release/tools/mock_llm/mock-llm --port 0 \
    --script samples/agents/mock_script.json
  pids+=($listening_pid)
  url=$listening_url
  export GOOGLE_GEMINI_BASE_URL=$url GEMINI_API_KEY=mock-llm
  echo "web: no provider key is set, so mock-llm ($url) plays the models (samples/agents/mock_script.json)"
fi
"$program" web "${args[@]}" "$@" samples/agents &
pids+=($!)
wait "${pids[-1]}"
