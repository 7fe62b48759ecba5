#!/usr/bin/env bash
# adk-cpp's OTLP exporter against a receiver that decodes with the official OTLP definitions (otlp/): the spans of a
# transfer, a tool call, a model error and a cancel, sent once as protobuf (content captured) and once as JSON
# (content left out); otlp/otlp_check.mjs says what each must hold.
#   run_otlp.sh OTLP_EXPORT_CLIENT WORK_DIR
set -euo pipefail
program=$1
here=$(cd "$(dirname "$0")" && pwd)
NPM_PACKAGE_DIR=$here/otlp source "$here/npm_install.sh" "$2" otlp_receiver.mjs otlp_check.mjs

pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null || true' EXIT
for run in "protobuf http/protobuf true" "json http/json false"; do
  set -- $run
  rm -f "spans_$1.jsonl" receiver.log
  node otlp_receiver.mjs "spans_$1.jsonl" >receiver.log 2>&1 & pid=$!
  for _ in $(seq 200); do [ -s receiver.log ] && break; sleep 0.05; done
  url=$(sed -n '1s/^listening on //p' receiver.log)
  [ -n "$url" ] || { echo "FAIL: the receiver did not start"; cat receiver.log; exit 1; }
  OTEL_EXPORTER_OTLP_ENDPOINT=$url OTEL_EXPORTER_OTLP_PROTOCOL=$2 OTEL_SERVICE_NAME=otlp-interop \
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=$3 OTEL_BSP_SCHEDULE_DELAY=100 "$program"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  node otlp_check.mjs "spans_$1.jsonl" "$1" "$3" || { echo "FAIL: $1"; exit 1; }
  echo "PASS: $1"
done
echo "otlp interop: PASS"
