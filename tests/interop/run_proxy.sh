#!/usr/bin/env bash
# HTTPS through a real proxy (the `proxy` package from the npm registry): weather_agent reaches mock-llm
# over TLS through a CONNECT tunnel, with credentials from HTTPS_PROXY (percent-encoded); wrong credentials
# are refused with a clear message; NO_PROXY bypasses the proxy.
#   run_proxy.sh MOCK_LLM WEATHER_AGENT SCRIPT.json WORK_DIR
set -euo pipefail
mock=$1 agent=$2 script=$3
source "$(dirname "$0")/npm_install.sh" "$4" proxy_server.mjs
fail() { echo "FAIL: $*" >&2; exit 1; }

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1
"$mock" --tls --cert cert.pem --key key.pem --script "$script" >mock.log 2>&1 & pids+=($!)
node proxy_server.mjs user 'p@ss' >proxy.log 2>&1 & pids+=($!)
for log in mock.log proxy.log; do
  for _ in $(seq 200); do [ -s "$log" ] && break; sleep 0.05; done
done
mock_url=$(sed -n '1s/^listening on https:\/\/127\.0\.0\.1/https:\/\/localhost/p' mock.log)
proxy_port=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' proxy.log)
[ -n "$mock_url" ] && [ -n "$proxy_port" ] || fail "servers did not start: $(cat mock.log proxy.log)"
mock_authority=${mock_url#https://}

export SSL_CERT_FILE=$PWD/cert.pem ADK_MODEL=gemini-2.5-flash GOOGLE_GEMINI_BASE_URL=$mock_url GEMINI_API_KEY=test
export NO_PROXY=

HTTPS_PROXY="http://user:p%40ss@127.0.0.1:$proxy_port" "$agent" >answer.txt 2>&1 ||
  fail "through the proxy: $(cat answer.txt)"
grep -q "weather_agent: It is sunny and 22 degrees in Paris (from mock-llm)." answer.txt ||
  fail "no answer through the proxy: $(cat answer.txt)"
grep -q "^CONNECT $mock_authority allowed$" proxy.log || fail "the proxy saw no tunnel: $(cat proxy.log)"

set +e
HTTPS_PROXY="http://user:wrong@127.0.0.1:$proxy_port" "$agent" >refused.txt 2>&1
status=$?
set -e
[ "$status" != 0 ] || fail "wrong proxy credentials were accepted"
grep -q "refused to open a tunnel to $mock_authority: HTTP 407" refused.txt || fail "no clear 407 message: $(cat refused.txt)"

tunnels=$(grep -c "^CONNECT" proxy.log)
HTTPS_PROXY="http://user:p%40ss@127.0.0.1:$proxy_port" NO_PROXY=localhost "$agent" >direct.txt 2>&1 ||
  fail "NO_PROXY: $(cat direct.txt)"
[ "$(grep -c "^CONNECT" proxy.log)" = "$tunnels" ] || fail "NO_PROXY=localhost still went through the proxy"
echo "proxy: PASS"
