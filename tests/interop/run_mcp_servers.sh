#!/usr/bin/env bash
# The reference MCP servers from npm (tests/interop/mcp/package.json, on Node 22 from npm) against an agent whose
# tools are an McpToolset (mcp_everything_client): server-everything over stdio, over Streamable HTTP and over the
# old HTTP+SSE transport; server-filesystem over stdio on a temporary folder. Then the file_assistant sample, in
# C++ and as its agent-config YAML under `adk run` against mock-llm. No server process is left after.
#   run_mcp_servers.sh CLIENT WORK_DIR FILE_ASSISTANT ADK MOCK_LLM SAMPLE_DIR
set -euo pipefail
client=$1 work=$2 file_assistant=$3 adk=$4 mock=$5 sample_dir=$6
NPM_PACKAGE_DIR="$(cd "$(dirname "$0")" && pwd)/mcp" source "$(dirname "$0")/npm_install.sh" "$work"
export PATH="$PWD/node_modules/.bin:$PATH"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
fail() { echo "FAIL: $*"; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Starts server-everything with a transport on a free port, $port; waits until it listens. Called as it is, not in
# $(...): a subshell's pids+=() would not reach the trap, and the server would outlive the test.
serve() {
  local transport=$1 log=$2
  port=$(free_port)
  PORT=$port mcp-server-everything "$transport" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do
    grep -q "$port" "$log" && return
    sleep 0.05
  done
  fail "server-everything $transport did not start: $(cat "$log")"
}

"$client" stdio mcp-server-everything stdio >stdio.out 2>&1 || fail "server-everything over stdio: $(cat stdio.out)"
cat stdio.out
serve streamableHttp http.log
"$client" http "http://127.0.0.1:$port/mcp" >http.out 2>&1 || fail "server-everything over HTTP: $(cat http.out)"
cat http.out
serve sse sse.log
"$client" http "http://127.0.0.1:$port/sse" >sse.out 2>&1 || fail "server-everything over HTTP+SSE: $(cat sse.out)"
cat sse.out
folder=$(mktemp -d)
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$folder"' EXIT
folder=$(cd "$folder" && pwd -P)
"$client" files "$folder" mcp-server-filesystem "$folder" >files.out 2>&1 || fail "server-filesystem: $(cat files.out)"
cat files.out
[ "$(cat "$folder/note.txt")" = "written by an adk-cpp agent" ] || fail "the file the agent wrote is not on disk"

# The sample, in C++ (the scripted model) ...
FILES_SERVER=mcp-server-filesystem "$file_assistant" "$folder" >sample.out 2>&1 || fail "file_assistant: $(cat sample.out)"
cat sample.out
grep -qF '[list_directory returned {"content":[{"type":"text","text":"[FILE] note.txt"' sample.out ||
  fail "file_assistant did not list the folder: $(cat sample.out)"
# ... and its YAML under adk run, run in the folder it serves, with mock-llm playing the model. npx finds the
# server installed here.
cat >script.json <<'JSON'
{"turns": [{"function_calls": [{"name": "list_directory", "args": {"path": "."}}]}, {"chunks": ["Listed."]}]}
JSON
"$mock" --port 0 --script script.json >mock.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s mock.log ] && break; sleep 0.05; done
printf 'What is here?\nexit\n' | GEMINI_API_KEY=test-key GOOGLE_GEMINI_BASE_URL=$(sed -n '1s/^listening on //p' mock.log) \
  "$adk" run --session_service_uri memory:// "$sample_dir" >yaml.out 2>&1 || fail "adk run file_assistant: $(cat yaml.out)"
cat yaml.out
grep -qF 'list_directory returned {"content":[{"type":"text","text":"' yaml.out && grep -qF '[FILE] package.json' yaml.out ||
  fail "adk run file_assistant did not list its folder: $(cat yaml.out)"
if pgrep -f "mcp-server-everything stdio|mcp-server-filesystem" >/dev/null; then
  fail "a stdio server outlived its toolset: $(pgrep -af 'mcp-server-everything stdio|mcp-server-filesystem')"
fi
echo "mcp servers: PASS"
