#!/usr/bin/env bash
# adk-cpp's OTLP exporters against a receiver that decodes with the official OTLP definitions (otlp/): the spans
# and metrics of a transfer, a tool call, a model error and a cancel, sent once as protobuf (content captured) and
# once as JSON (content left out); otlp/otlp_check.mjs says what each must hold. Then one trace end to end: a
# client traced by OpenTelemetry's JS SDK asks `api_server` (the samples' weather_agent against mock-llm), which
# exports to the receiver; otlp/otel_js_check.mjs follows the trace id from the client to the model's requests.
#   run_otlp.sh OTLP_EXPORT_CLIENT WORK_DIR SAMPLE_AGENTS MOCK_LLM SAMPLES_DIR
set -euo pipefail
program=$1 samples_program=$3 mock=$4 samples=$5
here=$(cd "$(dirname "$0")" && pwd)
NPM_PACKAGE_DIR=$here/otlp source "$here/npm_install.sh" "$2" otlp_receiver.mjs otlp_check.mjs otel_client.mjs \
  otel_js_check.mjs

source "$here/processes.sh"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null || true; stop_processes' EXIT
for run in "protobuf http/protobuf true" "json http/json false"; do
  set -- $run
  rm -f "spans_$1.jsonl" receiver.log
  node otlp_receiver.mjs "spans_$1.jsonl" >receiver.log 2>&1 & pid=$!
  for _ in $(seq 200); do [ -s receiver.log ] && break; sleep 0.05; done
  url=$(sed -n '1s/^listening on //p' receiver.log)
  [ -n "$url" ] || { echo "FAIL: the receiver did not start"; cat receiver.log; exit 1; }
  OTEL_EXPORTER_OTLP_ENDPOINT=$url OTEL_EXPORTER_OTLP_PROTOCOL=$2 OTEL_SERVICE_NAME=otlp-interop \
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=$3 OTEL_BSP_SCHEDULE_DELAY=100 OTEL_METRIC_EXPORT_INTERVAL=60000 \
    "$program"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  node otlp_check.mjs "spans_$1.jsonl" "$1" "$3" || { echo "FAIL: $1"; exit 1; }
  echo "PASS: $1"
done
# One trace from a client traced by the JS SDK, through api_server, to the model's requests.
rm -f spans_js.jsonl receiver.log model_traceparents.log
start_listening receiver.log node otlp_receiver.mjs spans_js.jsonl
collector=$listening_url
start_listening mock.log "$mock" --port 0 --script "$samples/mock_script.json" \
  --trace-log "$PWD/model_traceparents.log"
token=otel-s3cret
OTEL_EXPORTER_OTLP_ENDPOINT=$collector OTEL_SERVICE_NAME=otlp-interop OTEL_BSP_SCHEDULE_DELAY=100 \
  OTEL_METRIC_EXPORT_INTERVAL=200 GOOGLE_GEMINI_BASE_URL=$listening_url GEMINI_API_KEY=test-key ADK_API_TOKEN=$token \
  start_serving server.log \
  "$samples_program" api_server --port 0 --session_service_uri memory:// --artifact_service_uri memory:// "$samples"
base=$served_url server_pid=$served_pid
node otel_client.mjs "$base" "$token" >client.json || { echo "FAIL: the JS client"; exit 1; }
# Stopped, the server sends what waits (spans and the metrics' last values) before it exits.
kill -TERM "$server_pid"
wait "$server_pid" || { echo "FAIL: api_server exited $? on SIGTERM: $(tail -5 server.log)"; exit 1; }
node otel_js_check.mjs spans_js.jsonl model_traceparents.log client.json || { echo "FAIL: one trace end to end"; exit 1; }
echo "PASS: one trace from the JS SDK's client to the model"
echo "otlp interop: PASS"
