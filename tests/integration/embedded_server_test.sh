#!/usr/bin/env bash
# samples/embedded_server as a browser uses it, with curl over loopback, against mock-llm: the page, a run
# streamed as Server-Sent Events (a tool call, partial text, the final text), a run stopped by POST /stop
# (the stream ends at once with the cancellation), and a client that leaves mid-stream (its run is gone).
#   embedded_server_test.sh EMBEDDED_SERVER MOCK_LLM SCRIPT.json
set -euo pipefail
server=$1 mock=$2 script=$3
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"

first_line() {  # first_line LOG PREFIX: waits for the program's first line, prints what follows PREFIX
  for _ in $(seq 200); do [ -s "$1" ] && break; sleep 0.05; done
  sed -n "1s|^$2||p" "$1"
}
start() {  # start NAME SCRIPT [mock-llm flags...]: a mock-llm and an embedded_server on it; sets $url
  local name=$1 mock_script=$2
  shift 2
  "$mock" --port 0 --script "$mock_script" "$@" >"$name-mock.log" 2>&1 &
  pids+=($!)
  local mock_url
  mock_url=$(first_line "$name-mock.log" "listening on ")
  [ -n "$mock_url" ] || fail "mock-llm did not start: $(cat "$name-mock.log")"
  GOOGLE_GEMINI_BASE_URL=$mock_url GEMINI_API_KEY=test-key "$server" 0 >"$name.log" 2>&1 &
  pids+=($!)
  url=$(first_line "$name.log" "embedded_server: ")
  [ -n "$url" ] || fail "embedded_server did not start: $(cat "$name.log")"
}

start fast "$script"
curl -sf "$url" | grep -q "<title>adk-cpp, embedded</title>" || fail "no page at $url"
curl -sfN -X POST --data-binary 'What is the weather in Paris?' "${url}chat" >run.out || fail "POST /chat failed"
grep -q '"functionCall":{.*"name":"get_weather"' run.out || fail "no tool call frame: $(cat run.out)"
grep -q '"functionResponse":{.*"sky":"sunny"' run.out || fail "no tool result frame"
[ "$(grep -c '"partial":true' run.out)" = 5 ] || fail "not 5 partial frames: $(cat run.out)"
grep -q '"text":"It is sunny and 22 degrees in Paris (from mock-llm)."' run.out || fail "no final text"
[ "$(grep -vc '^data: {.*}$\|^$' run.out)" = 0 ] || fail "a line that is not a one-line data frame"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary 'e-nothing' "${url}stop")" = 404 ] ||
  fail "POST /stop of no run is not 404"

# A long, slow answer: stopped by POST /stop, from another connection.
cat >slow.json <<'JSON'
{"turns": [{"chunks": ["tick "], "repeat": 400}]}
JSON
start slow slow.json --chunk-delay-ms 25
curl -sN -X POST --data-binary 'Count' "${url}chat" >slow.out &
curl_pid=$!
pids+=($curl_pid)
for _ in $(seq 200); do grep -q '"partial":true' slow.out 2>/dev/null && break; sleep 0.05; done
invocation=$(grep -o '"invocationId":"[^"]*"' slow.out | head -1 | cut -d'"' -f4)
[ -n "$invocation" ] || fail "no invocation id in the slow stream: $(head -c 500 slow.out)"
[ "$(curl -sf -X POST --data-binary "$invocation" "${url}stop")" = stopped ] || fail "POST /stop did not stop it"
for _ in $(seq 40); do kill -0 "$curl_pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$curl_pid" 2>/dev/null && fail "the stream goes on after /stop"
tail -2 slow.out | grep -q '^data: {"error":".*cancel' || fail "the stream does not end with the cancellation: $(tail -c 300 slow.out)"
[ "$(grep -c '"partial":true' slow.out)" -lt 400 ] || fail "the whole answer came despite /stop"

# A client that leaves: its run is cancelled with it (Runner::cancel then finds nothing).
curl -sN -X POST --data-binary 'Count' "${url}chat" >left.out &
curl_pid=$!
pids+=($curl_pid)
for _ in $(seq 200); do grep -q '"partial":true' left.out 2>/dev/null && break; sleep 0.05; done
invocation=$(grep -o '"invocationId":"[^"]*"' left.out | head -1 | cut -d'"' -f4)
kill "$curl_pid"
gone=""
for _ in $(seq 40); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary "$invocation" "${url}stop")" = 404 ]; then gone=1; break; fi
  sleep 0.05
done
[ -n "$gone" ] || fail "the run of a client that left is still running"
grep -q "AddressSanitizer\|runtime error" fast.log slow.log && fail "sanitizer report: $(cat fast.log slow.log)"
echo "embedded_server: PASS"
