#!/usr/bin/env bash
# mock-llm as people run it: its command line, its first line of output, and the weather_agent sample run
# against it in each provider's format, over HTTP and over HTTPS with a certificate made here and trusted
# through SSL_CERT_FILE.
#   mock_llm_cli_test.sh MOCK_LLM WEATHER_AGENT SCRIPT
set -euo pipefail
mock=$1 agent=$2 script=$3
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs mock-llm with arguments it must refuse; sets $status, its message in $work/err.
refused() {
  set +e
  "$mock" "$@" >"$work/out" 2>"$work/err"; status=$?
  set -e
}

# Bad arguments: exit status 2 and the usage.
refused --port 0
[ "$status" = 2 ] || fail "mock-llm without --script or --replay exited $status, not 2"
grep -q "give --script or --replay" "$work/err" || fail "no usage message: $(cat "$work/err")"
grep -q "usage: mock-llm" "$work/err" || fail "no usage line"

# A bad script is refused at start, naming the turn and the field (it used to hang the connection that asked
# for that turn).
echo '{"turns": [{"text": "ok"}, {"error": {"status": "x"}}]}' >"$work/bad.json"
refused --port 0 --script "$work/bad.json"
[ "$status" = 2 ] || fail "mock-llm with a bad script exited $status, not 2"
grep -q 'script turn 1: "error.status" must be an HTTP error status' "$work/err" ||
  fail "no message naming the bad turn: $(cat "$work/err")"

# Starts mock-llm with the given arguments; sets $url from its first line of output.
start() {
  local log="$work/mock$#.log"
  "$mock" "$@" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$log" ] && break
    sleep 0.05
  done
  url=$(head -1 "$log" | sed -n 's/^listening on \(https\?:\/\/127\.0\.0\.1:[0-9]\+\)$/\1/p')
  [ -n "$url" ] || fail "mock-llm's first line is not 'listening on URL': $(head -1 "$log")"
}

check_answer() {
  grep -q '\[calls get_weather{"city":"Paris"}\]' "$work/answer" || fail "$1: no tool call: $(cat "$work/answer")"
  grep -q "weather_agent: It is sunny and 22 degrees in Paris (from mock-llm)." "$work/answer" ||
    fail "$1: no streamed answer: $(cat "$work/answer")"
}

start --port 0 --script "$script"
ADK_MODEL=gemini-2.5-flash GOOGLE_GEMINI_BASE_URL=$url GEMINI_API_KEY=test "$agent" >"$work/answer" 2>&1
check_answer gemini
ADK_MODEL=openai/gpt-4o-mini OPENAI_BASE_URL=$url/v1 OPENAI_API_KEY=test "$agent" >"$work/answer" 2>&1
check_answer openai
ADK_MODEL=anthropic/claude-sonnet-4-5 ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=test "$agent" >"$work/answer" 2>&1
check_answer anthropic

# HTTPS with a self-signed certificate: refused until it is trusted.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1
start --tls --cert "$work/cert.pem" --key "$work/key.pem" --script "$script"
case $url in https://*) ;; *) fail "--tls printed $url";; esac
set +e
ADK_MODEL=gemini-2.5-flash GOOGLE_GEMINI_BASE_URL=$url GEMINI_API_KEY=test "$agent" >"$work/answer" 2>&1; status=$?
set -e
[ "$status" != 0 ] || fail "an untrusted certificate was accepted"
grep -q "self-signed certificate" "$work/answer" || fail "no clear TLS error: $(cat "$work/answer")"
SSL_CERT_FILE=$work/cert.pem ADK_MODEL=gemini-2.5-flash GOOGLE_GEMINI_BASE_URL=$url GEMINI_API_KEY=test \
  "$agent" >"$work/answer" 2>&1
check_answer "gemini over https"

# --replay serves a recording; --status answers with an error status and Retry-After.
printf 'data: {"a":1}\n\ndata: {"a":2}\n\n' >"$work/rec.sse"
start --port 0 --replay "$work/rec.sse" --chunk-delay-ms 10
body=$(curl -s -N -X POST "$url/anything")
[ "$body" = $'data: {"a":1}\n\ndata: {"a":2}' ] || fail "--replay served: $body"
start --port 0 --script "$script" --status 429 --retry-after 3
headers=$(curl -s -D - -o /dev/null -X POST "$url/v1/messages" | tr -d '\r')
grep -q "^HTTP/1.1 429" <<<"$headers" || fail "--status 429: $headers"
grep -qi "^retry-after: 3$" <<<"$headers" || fail "--retry-after 3: $headers"
# --stamp writes the monotonic clock (ns) where a chunk says {t}, when the chunk is written.
echo '{"turns": [{"chunks": ["w{t} ", "w{t} "]}]}' >"$work/stamp.json"
start --port 0 --script "$work/stamp.json" --stamp
body=$(curl -s -N -X POST "$url/v1/chat/completions" -d '{"model":"m","stream":true,"messages":[]}')
[ "$(grep -oE '"content":"w[0-9]{6,} "' <<<"$body" | wc -l)" = 2 ] || fail "--stamp: $body"
# --spread-chunks: two streams asked for at once write their paced chunks at phases 0.618 of the delay apart
# (request n at n x 0.618 of it, on the monotonic clock), one slot after another: without it they write together.
echo '{"turns": [{"chunks": ["w{t} ", "w{t} ", "w{t} "]}]}' >"$work/spread.json"
refused --port 0 --script "$work/spread.json" --spread-chunks
[ "$status" = 2 ] && grep -q "give --chunk-delay-ms N too" "$work/err" ||
  fail "--spread-chunks without --chunk-delay-ms: exited $status, $(cat "$work/err")"
start --port 0 --script "$work/spread.json" --stamp --chunk-delay-ms 200 --spread-chunks
ask() { curl -s -N -X POST "$url/v1/chat/completions" -d '{"model":"m","stream":true,"messages":[]}' >"$work/$1"; }
ask spread0 & a=$!
ask spread1 & b=$!
wait $a $b
phase() {  # the phase in ms of a stream's second chunk; its third one slot (200 ms) later
  local stamps
  stamps=($(grep -oE '"content":"w[0-9]+ "' "$work/$1" | grep -oE '[0-9]+'))
  [ "${#stamps[@]}" = 3 ] || fail "--spread-chunks: $(cat "$work/$1")"
  local step=$(( (stamps[2] - stamps[1]) / 1000000 ))
  [ "$step" -ge 150 ] && [ "$step" -le 250 ] || fail "--spread-chunks: slots ${step} ms apart, not 200"
  echo $(( stamps[1] / 1000000 % 200 ))
}
p0=$(phase spread0)
p1=$(phase spread1)
d=$(( (p0 - p1 + 200) % 200 )); [ "$d" -gt 100 ] && d=$(( 200 - d ))
[ "$d" -ge 40 ] || fail "--spread-chunks: phases $p0 and $p1 ms, $d apart (76 expected)"
echo "mock-llm command line: PASS"
