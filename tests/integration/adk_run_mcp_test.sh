#!/usr/bin/env bash
# `adk run` on an app whose YAML names an MCP server over stdio (tests/support/mcp_test_server.cpp), against
# mock-llm: the agent calls the server's tool, the server asks the person (elicitation) at the terminal, field by
# field; an empty answer leaves the field to the schema's default; declining is told to the server; and when the
# program ends no server process is left. Then an MCP server over HTTP that asks for OAuth
# (adk_mcp_http_test_server --oauth): `adk run` prints the address to open and reads back the one the browser came
# back to, and the agent calls the server's tool. Last, `adk api_server --port 0` on that app: the authorization
# address a web UI user is sent to names the server's real port.
#   adk_run_mcp_test.sh ADK MOCK_LLM MCP_TEST_SERVER MCP_HTTP_TEST_SERVER
set -euo pipefail
adk=$1 mock=$2 server=$3 http_server=$4
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
export GEMINI_API_KEY=test-key  # mock-llm answers; nothing leaves loopback

mkdir -p apps/asker
cat >apps/asker/root_agent.yaml <<YAML
name: asker
model: gemini-2.5-flash
instruction: You greet people by name.
tools:
  - name: McpToolset
    args:
      stdio_connection_params:
        server_params: {command: "$server"}
        timeout: 30
      tool_filter: [ask]
YAML
cat >script.json <<'JSON'
{"turns": [{"text": "unused"}],
 "agents": {"asker": {"turns": [
   {"function_calls": [{"name": "ask", "args": {}}]},
   {"chunks": ["Nice to meet you."]}
 ]},
 "remote": {"turns": [
   {"function_calls": [{"name": "echo", "args": {"text": "from the terminal"}}]},
   {"chunks": ["The server echoed it."]}
 ]}}}
JSON
"$mock" --port 0 --script script.json >mock.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s mock.log ] && break; sleep 0.05; done
mock_url=$(sed -n '1s/^listening on //p' mock.log)
[ -n "$mock_url" ] || fail "mock-llm did not start: $(cat mock.log)"
export GOOGLE_GEMINI_BASE_URL=$mock_url

servers() { { pgrep -f -x "$server" || true; } | wc -l; }
before=$(servers)

# Accepted, the field answered.
printf 'hello\ny\nBob\nexit\n' | "$adk" run --session_service_uri memory:// apps/asker >accept.out 2>accept.err ||
  fail "run exited $?: $(cat accept.err)"
grep -qF "[mcp] Your name?" accept.out || fail "the server's question was not shown: $(cat accept.out)"
grep -qF '[asker] ask returned {"content":[{"type":"text","text":"{\"action\":\"accept\",\"content\":{\"name\":\"Bob\"}}"' accept.out ||
  fail "the answer did not reach the server: $(cat accept.out)"
grep -qF "Nice to meet you." accept.out || fail "no final answer: $(cat accept.out)"

# Accepted, the field left empty: the schema's default.
printf 'hello\ny\n\nexit\n' | "$adk" run --session_service_uri memory:// apps/asker >default.out 2>&1 ||
  fail "run exited $?: $(cat default.out)"
grep -qF '\"content\":{\"name\":\"Ann\"}' default.out || fail "the default was not applied: $(cat default.out)"

# Declined.
printf 'hello\nn\nexit\n' | "$adk" run --session_service_uri memory:// apps/asker >decline.out 2>&1 ||
  fail "run exited $?: $(cat decline.out)"
grep -qF '{\"action\":\"decline\"}' decline.out || fail "the server was not told of the refusal: $(cat decline.out)"

[ "$(servers)" = "$before" ] || fail "an MCP server process outlived adk run"

# OAuth at the terminal: the address to open is printed; the address the browser came back to is read back.
"$http_server" --oauth >http_server.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s http_server.log ] && break; sleep 0.05; done
mcp_url=$(sed -n '1s/^listening on //p' http_server.log)
[ -n "$mcp_url" ] || fail "the MCP HTTP test server did not start: $(cat http_server.log)"
mkdir -p apps/remote
cat >apps/remote/root_agent.yaml <<YAML
name: remote
model: gemini-2.5-flash
instruction: You repeat what you are told with the echo tool.
tools:
  - name: McpToolset
    args:
      streamable_http_connection_params: {url: "$mcp_url"}
      tool_filter: [echo]
YAML
coproc RUN { exec "$adk" run --session_service_uri memory:// apps/remote 2>&1; }
run_pid=$RUN_PID
pids+=("$run_pid")
echo "echo something" >&"${RUN[1]}"
url=""
while IFS= read -r -t 30 line <&"${RUN[0]}"; do
  echo "$line" >>oauth.out
  case $line in *"/authorize?"*) url=${line//[[:space:]]/}; break ;; esac
done
[ -n "$url" ] || fail "no address to open was printed: $(cat oauth.out)"
# The browser's part: the authorization server sends it back to the redirect URI with a code.
back=$(python3 - "$url" <<'PY'
import http.client, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
c.request("GET", u.path + "?" + u.query)
print(c.getresponse().getheader("location") or "")
PY
)
case $back in *"code="*) ;; *) fail "the authorization server did not send the browser back: $back" ;; esac
printf '%s\nexit\n' "$back" >&"${RUN[1]}"
cat <&"${RUN[0]}" >>oauth.out || true
wait "$run_pid" || fail "adk run exited $?: $(cat oauth.out)"
grep -qF "paste the address the browser was sent back to" oauth.out || fail "no prompt for the address: $(cat oauth.out)"
grep -qF 'echo from the terminal' oauth.out || fail "the tool did not run after the authorization: $(cat oauth.out)"
grep -qF "The server echoed it." oauth.out || fail "no final answer: $(cat oauth.out)"

# The same app served with --port 0: the authorization address a user of the web UI is sent to names the port the
# server listens on (it is bound before the apps load), not port 0.
mkdir -p served && cp -r apps/remote served/
"$adk" api_server --port 0 --session_service_uri memory:// served >api.log 2>&1 &
api_pid=$!
pids+=("$api_pid")
for _ in $(seq 200); do grep -q "serving" api.log 2>/dev/null && break; sleep 0.05; done
base=$(sed -n 's/.* at \(http:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' api.log | head -1)
[ -n "$base" ] || fail "api_server did not start: $(cat api.log)"
port=${base##*:}
[ "$port" != 0 ] || fail "api_server says port 0: $(cat api.log)"
sid=$(curl -sf -X POST "$base/apps/remote/users/u1/sessions" | sed 's/.*"id":"\([^"]*\)".*/\1/')
curl -sf -X POST "$base/run" -H 'content-type: application/json' \
  -d "{\"appName\":\"remote\",\"userId\":\"u1\",\"sessionId\":\"$sid\",
       \"newMessage\":{\"role\":\"user\",\"parts\":[{\"text\":\"echo something\"}]}}" >run.out ||
  fail "/run failed: $(cat api.log)"
grep -qF '"name":"adk_request_credential"' run.out || fail "no credential asked for: $(head -c 2000 run.out)"
grep -qF "redirect_uri=http%3A%2F%2F127.0.0.1%3A$port%2Fdev-ui%2F" run.out ||
  fail "the authorization address does not send the browser back to port $port: $(grep -o 'redirect_uri=[^&\"]*' run.out)"
kill -TERM "$api_pid"
wait "$api_pid" || fail "api_server exited $? on SIGTERM"
echo "adk run with MCP: PASS"
