#!/usr/bin/env bash
# The browser test: the ADK web UI (@google/adk-devtools' files, fetched from npm by tools/fetch_web_ui.sh)
# served by the samples' `web` command over the YAML samples, against mock-llm, driven in Debian's chromium by
# playwright-core (web_ui/web_ui_test.mjs). Screenshots are left in WORK_DIR/screenshots. Skipped (77), with
# the reason, only where chromium or the npm registry cannot be had.
#   run_web_ui.sh SAMPLE_AGENTS MOCK_LLM SAMPLES_DIR WORK_DIR
set -euo pipefail
program=$1 mock=$2 samples=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v chromium >/dev/null; then
  echo "SKIPPED: chromium is not installed (tools/setup.sh installs Debian's chromium)"
  exit 77
fi
if ! ui=$(bash "$here/../../tools/fetch_web_ui.sh" 2>fetch.err); then
  if grep -qE 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|network|npm is not installed' fetch.err; then
    echo "SKIPPED: the ADK web UI cannot be fetched: $(head -c 300 fetch.err)"
    exit 77
  fi
  echo "FAIL: tools/fetch_web_ui.sh: $(cat fetch.err)"
  exit 1
fi
rm -f fetch.err
NPM_PACKAGE_DIR=$here/web_ui source "$here/npm_install.sh" "$work" web_ui_test.mjs

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
"$mock" --port 0 --script "$samples/mock_script.json" >mock.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s mock.log ] && break; sleep 0.05; done
mock_url=$(sed -n '1s/^listening on //p' mock.log)
[ -n "$mock_url" ] || { echo "FAIL: mock-llm did not start: $(cat mock.log)"; exit 1; }
rm -f web.db
GOOGLE_GEMINI_BASE_URL=$mock_url GEMINI_API_KEY=test-key \
  "$program" web --port 0 --ui_dir "$ui" --session_service_uri "sqlite:///$work/web.db" \
  --artifact_service_uri memory:// "$samples" >web.log 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q serving web.log 2>/dev/null && break; sleep 0.05; done
base=$(sed -n 's/.* at \(http:\/\/127\.0\.0\.1:[0-9]*\)\/dev-ui\/.*/\1/p' web.log | head -1)
[ -n "$base" ] || { echo "FAIL: the web command did not start: $(cat web.log)"; exit 1; }
node web_ui_test.mjs "$base" "$work/screenshots"
