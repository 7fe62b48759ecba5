#!/usr/bin/env bash
# Installs the official provider SDKs from the npm registry (sdk_clients/package.json) and runs
# sdk_clients/check.mjs against three mock-llm servers. Exits 77 (CTest: skipped) with the reason when
# Node.js is missing or the npm registry cannot be reached.
#   run_sdk_clients.sh MOCK_LLM SCRIPT.json WORK_DIR
set -euo pipefail
mock=$1 script=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "SKIPPED: node and npm are not installed (tools/setup.sh installs them)"
  exit 77
fi
mkdir -p "$work"
cp "$here/sdk_clients/package.json" "$here/sdk_clients/check.mjs" "$work/"
cd "$work"
if ! timeout 600 npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1; then
  if grep -Eq "ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|network" npm.log; then
    echo "SKIPPED: the npm registry cannot be reached: $(grep -m1 -E 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|network' npm.log)"
    exit 77
  fi
  echo "FAIL: npm install failed:"; cat npm.log; exit 1
fi

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
echo '{"turns": [{"error": {"status": 400, "message": "bad request, by script"}}]}' >error.json
echo '{"turns": [{"chunks": ["Hel"], "stream_error": "overloaded now"}]}' >broken.json
# Three servers, so their URLs are known before node starts.
"$mock" --port 0 --script "$script" >good.log 2>&1 & pids+=($!)
"$mock" --port 0 --script error.json >error.log 2>&1 & pids+=($!)
"$mock" --port 0 --script broken.json >broken.log 2>&1 & pids+=($!)
for log in good.log error.log broken.log; do
  for _ in $(seq 100); do [ -s "$log" ] && break; sleep 0.05; done
done
url() { sed -n '1s/^listening on //p' "$1"; }
node check.mjs "$(url good.log)" "$(url error.log)" "$(url broken.log)"
