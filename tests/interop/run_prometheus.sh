#!/usr/bin/env bash
# Debian's Prometheus scrapes `adk api_server`'s /metrics: the server (the samples' weather_agent against mock-llm,
# a bearer token set) answers a few runs with a tool call; Prometheus, started here with a scrape interval of one
# second and the token in its configuration, scrapes it, and its query API must return the token usage, the model
# calls' and the tool's durations, the invocations running, and the session store's (SQLite) latency. A second
# job without the token must be refused.
# Skipped (77) only where prometheus is not installed.
#   run_prometheus.sh SAMPLE_AGENTS MOCK_LLM SAMPLES_DIR WORK_DIR
set -euo pipefail
program=$1 mock=$2 samples=$3 work=$4
if ! command -v prometheus >/dev/null; then
  echo "SKIPPED: prometheus is not installed (tools/setup.sh installs Debian's prometheus)"
  exit 77
fi
source "$(cd "$(dirname "$0")" && pwd)/processes.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"

start_listening mock.log "$mock" --port 0 --script "$samples/mock_script.json"
token=metrics-s3cret
GOOGLE_GEMINI_BASE_URL=$listening_url GEMINI_API_KEY=test-key ADK_API_TOKEN=$token start_serving server.log \
  "$program" api_server --port 0 --session_service_uri sqlite:///sessions.db --artifact_service_uri memory:// "$samples"
base=$served_url
auth=(-H "authorization: Bearer $token")

runs=3
for i in $(seq $runs); do
  curl -sf "${auth[@]}" -X POST "$base/apps/weather_agent/users/u/sessions/s$i" >/dev/null \
    || { echo "FAIL: session s$i not created"; exit 1; }
  curl -sf "${auth[@]}" -H 'content-type: application/json' -X POST "$base/run" -d "{\"appName\": \"weather_agent\",
    \"userId\": \"u\", \"sessionId\": \"s$i\", \"newMessage\": {\"role\": \"user\", \"parts\": [{\"text\": \"Weather?\"}]}}" \
    >"run$i.json" || { echo "FAIL: run $i"; exit 1; }
  grep -q "sunny" "run$i.json" || { echo "FAIL: run $i did not answer: $(head -c 300 "run$i.json")"; exit 1; }
done
status=$(curl -s -o /dev/null -w '%{http_code}' "$base/metrics")
[ "$status" = 401 ] || { echo "FAIL: /metrics without the token answered $status, not 401"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
target=${base#http://}
printf '%s' "$token" >token
cat >prometheus.yml <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: adk
    metrics_path: /metrics
    authorization: {type: Bearer, credentials_file: $work/token}
    static_configs: [{targets: ["$target"]}]
  - job_name: adk_without_token
    metrics_path: /metrics
    static_configs: [{targets: ["$target"]}]
YAML
prometheus --config.file=prometheus.yml --storage.tsdb.path="$work/data" --web.listen-address="127.0.0.1:$port" \
  >prometheus.log 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$port

# The value of an instant query's first series, or nothing while Prometheus has none.
query() {
  curl -sf --get "$prom/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' \
    2>/dev/null || true
}
expect() {  # QUERY VALUE: waits up to 30 s for Prometheus to answer VALUE
  local got=
  for _ in $(seq 300); do
    got=$(query "$1")
    [ "$got" = "$2" ] && { echo "ok: $1 = $got"; return 0; }
    sleep 0.1
  done
  echo "FAIL: $1 is '$got', not $2"; tail -5 prometheus.log; exit 1
}
expect 'up{job="adk"}' 1
expect 'up{job="adk_without_token"}' 0
# Each run: two model calls (the tool call, the answer), one tool call, one agent run; tokens as mock-llm counts them.
expect 'sum(gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="generate_content",gen_ai_request_model="gemini-2.5-flash"})' $((2 * runs))
expect 'sum(gen_ai_execute_tool_duration_seconds_count{gen_ai_tool_name="get_weather"})' $runs
expect 'sum(gen_ai_invoke_agent_duration_seconds_count{gen_ai_agent_name="weather_agent"})' $runs
expect 'sum(adk_invocation_duration_seconds_count{adk_app_name="weather_agent"})' $runs
expect 'adk_invocations_active{job="adk"}' 0
expect 'count(gen_ai_client_token_usage_sum{gen_ai_token_type="input"} > 0)' 1
expect 'count(gen_ai_client_token_usage_sum{gen_ai_token_type="output"} > 0)' 1
expect 'sum(gen_ai_client_token_usage_count{gen_ai_token_type="input"})' $((2 * runs))
# The session store (an SQLite file): each session's creation, and the events stored, timed.
expect 'sum(db_client_operation_duration_seconds_count{db_operation_name="create_session",db_system_name="sqlite"})' $runs
expect 'count(db_client_operation_duration_seconds_count{db_operation_name="append_event",db_system_name="sqlite"} > 0)' 1
# Every answer was read whole: no frame waits for a client.
expect 'adk_server_stream_queue_depth{job="adk"}' 0
# A histogram Prometheus can compute with: the 99th percentile of a model call is a number.
p99=$(query 'histogram_quantile(0.99, sum by (le) (gen_ai_client_operation_duration_seconds_bucket))')
python3 -c "import sys; v=float('$p99'); sys.exit(0 if 0 < v < 100 else 1)" \
  || { echo "FAIL: histogram_quantile gave '$p99'"; exit 1; }
echo "ok: p99 of a model call = $p99 s"
echo "prometheus: PASS"
