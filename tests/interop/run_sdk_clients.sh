#!/usr/bin/env bash
# The official provider SDKs from the npm registry (package.json) run sdk_clients.mjs against three
# mock-llm servers: a scripted conversation, an HTTP 400, and a stream broken by an error event.
#   run_sdk_clients.sh MOCK_LLM SCRIPT.json WORK_DIR
set -euo pipefail
mock=$1 script=$2
source "$(dirname "$0")/npm_install.sh" "$3" sdk_clients.mjs

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
echo '{"turns": [{"error": {"status": 400, "message": "bad request, by script"}}]}' >error.json
echo '{"turns": [{"chunks": ["Hel"], "stream_error": "overloaded now"}]}' >broken.json
"$mock" --port 0 --script "$script" >good.log 2>&1 & pids+=($!)
"$mock" --port 0 --script error.json >error.log 2>&1 & pids+=($!)
"$mock" --port 0 --script broken.json >broken.log 2>&1 & pids+=($!)
for log in good.log error.log broken.log; do
  for _ in $(seq 100); do [ -s "$log" ] && break; sleep 0.05; done
done
url() { sed -n '1s/^listening on //p' "$1"; }
node sdk_clients.mjs "$(url good.log)" "$(url error.log)" "$(url broken.log)"
