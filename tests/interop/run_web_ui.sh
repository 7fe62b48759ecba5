#!/usr/bin/env bash
# The browser test: the ADK web UI (@google/adk-devtools' files, fetched from npm by tools/fetch_web_ui.sh)
# served by the samples' `web` command over the YAML samples, against mock-llm, driven in Debian's chromium by
# playwright-core (web_ui/web_ui_test.mjs). Screenshots are left in WORK_DIR/screenshots. Skipped (77), with
# the reason, only where chromium or the npm registry cannot be had. Then the OAuth step of an MCP server in the
# web UI: `adk web` over a YAML app whose McpToolset reaches an MCP server that asks for OAuth
# (adk_mcp_http_test_server --oauth); the UI's popup authorizes, and the agent calls the server's tool. The apps
# are resumable: refund_desk, a graph workflow, asks a person in the UI.
#   run_web_ui.sh SAMPLE_AGENTS MOCK_LLM SAMPLES_DIR WORK_DIR ADK MCP_HTTP_TEST_SERVER
set -euo pipefail
program=$1 mock=$2 samples=$3 work=$4 adk=$5 mcp_server=$6
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

source "$here/processes.sh"
"$mock" --port 0 --script "$samples/mock_script.json" >mock.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s mock.log ] && break; sleep 0.05; done
mock_url=$(sed -n '1s/^listening on //p' mock.log)
[ -n "$mock_url" ] || { echo "FAIL: mock-llm did not start: $(cat mock.log)"; exit 1; }
rm -f web.db web.db-wal web.db-shm  # what an earlier run left (its server is gone: processes.sh waits for it)
GOOGLE_GEMINI_BASE_URL=$mock_url GEMINI_API_KEY=test-key \
  "$program" web --resumable --port 0 --ui_dir "$ui" --session_service_uri "sqlite:///$work/web.db" \
  --artifact_service_uri memory:// "$samples" >web.log 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q serving web.log 2>/dev/null && break; sleep 0.05; done
base=$(sed -n 's/.* at \(http:\/\/127\.0\.0\.1:[0-9]*\)\/dev-ui\/.*/\1/p' web.log | head -1)
[ -n "$base" ] || { echo "FAIL: the web command did not start: $(cat web.log)"; exit 1; }

# An app whose MCP server asks for OAuth, served by `adk web` from YAML, with a mock-llm of its own.
"$mcp_server" --oauth >mcp.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s mcp.log ] && break; sleep 0.05; done
mcp_url=$(sed -n '1s/^listening on //p' mcp.log)
[ -n "$mcp_url" ] || { echo "FAIL: the MCP test server did not start: $(cat mcp.log)"; exit 1; }
rm -rf mcp_apps && mkdir -p mcp_apps/mcp_oauth_agent
cat >mcp_apps/mcp_oauth_agent/root_agent.yaml <<YAML
name: mcp_oauth_agent
model: gemini-2.5-flash
instruction: Repeat what the user says with the echo tool.
tools:
  - name: McpToolset
    args:
      streamable_http_connection_params: {url: "$mcp_url"}
      tool_filter: [echo]
YAML
cat >mcp_script.json <<'JSON'
{"turns": [{"text": "(no script for this agent)"}], "agents": {"mcp_oauth_agent": {"turns": [
  {"function_calls": [{"name": "echo", "args": {"text": "from the web UI"}}]},
  {"chunks": ["The server ", "echoed it."]}
]}}}
JSON
"$mock" --port 0 --script mcp_script.json >mcp_mock.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s mcp_mock.log ] && break; sleep 0.05; done
mcp_mock_url=$(sed -n '1s/^listening on //p' mcp_mock.log)
[ -n "$mcp_mock_url" ] || { echo "FAIL: mock-llm did not start: $(cat mcp_mock.log)"; exit 1; }
GOOGLE_GEMINI_BASE_URL=$mcp_mock_url GEMINI_API_KEY=test-key \
  "$adk" web --port 0 --ui_dir "$ui" --session_service_uri memory:// --artifact_service_uri memory:// mcp_apps \
  >mcp_web.log 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q serving mcp_web.log 2>/dev/null && break; sleep 0.05; done
mcp_base=$(sed -n 's/.* at \(http:\/\/127\.0\.0\.1:[0-9]*\)\/dev-ui\/.*/\1/p' mcp_web.log | head -1)
[ -n "$mcp_base" ] || { echo "FAIL: adk web did not start: $(cat mcp_web.log)"; exit 1; }
node web_ui_test.mjs "$base" "$work/screenshots" "$mcp_base"
