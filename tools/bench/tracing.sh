#!/usr/bin/env bash
# Tracing's cost (issue 34): workload (a) in process (agent_bench) at concurrency 50, with tracing off, on with a
# sink that only counts the spans (what making them costs), feeding ADK's metrics (GenAiMetrics), and exporting OTLP/HTTP protobuf to a receiver that
# decodes every request with the official OTLP definitions (tests/interop/otlp/otlp_receiver.mjs, a Node process of
# its own: its CPU is not counted). CPU per invocation of the whole client process (the exporter's thread included;
# what waits is flushed before the CPU is read), each mode `rounds` times, alternated, in one sitting.
#   tools/bench/tracing.sh [rounds] [BEFORE_AGENT_BENCH]
# With BEFORE_AGENT_BENCH (an agent_bench built from an earlier commit), it runs alternated with tracing off too:
# the A/B of the tracing seam itself when nothing is traced.
# The mock writes a chunk every CHUNK_DELAY_MS (20 by default, a real model's pace): with chunks as fast as it can
# (CHUNK_DELAY_MS=0) the client saturates and reads several chunks per wake-up, so its CPU per invocation falls
# whenever it is slower and rises whenever the mock is (the receiver slows the mock in `otlp`): that measures how
# well chunks batch, not what tracing costs. On a machine of two cores or more the client runs alone on core 1 and
# the mock and the receiver on core 0 (PIN=0 leaves them to the scheduler).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/server_lib.sh
cmake --build --preset release --target agent_bench >/dev/null
rounds=${1:-3}
before=${2:-}
results=$work/tracing.jsonl
: >"$results"

call='{"function_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}'
start_mock tracing "{\"turns\": [$call, {\"chunks\": [\"w{t} \"], \"repeat\": 20}]}" --stamp --chunk-delay-ms "${CHUNK_DELAY_MS:-20}"
pin=()
if [ "${PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  taskset -apc 0 "${pids[-1]}" >/dev/null
  pin=(taskset -c 1)
fi

receiver=$work/otlp_receiver
NPM_PACKAGE_DIR=$root/tests/interop/otlp bash -c "source '$root/tests/interop/npm_install.sh' '$receiver' otlp_receiver.mjs" >/dev/null
: >"$receiver/spans.jsonl"
start_listening "the OTLP receiver" "$receiver/receiver.log" env -C "$receiver" node otlp_receiver.mjs /dev/null
pids+=($listening_pid)
[ ${#pin[@]} -eq 0 ] || taskset -apc 0 "${pids[-1]}" >/dev/null
otlp_url=$listening_url

one() {  # LABEL BINARY [--tracing MODE]
  OTEL_EXPORTER_OTLP_ENDPOINT=$otlp_url "${pin[@]}" "$2" --mock "$mock_url" --workload a --concurrency 50 --invocations 3000 \
    --chunks 20 "${@:3}" | sed "s/^{/{\"mode\":\"$1\",/" | tee -a "$results"
}
for _ in $(seq "$rounds"); do
  if [ -n "$before" ]; then one before "$before"; fi  # it knows no --tracing: nothing is traced
  one off "$bin/bench/agent_bench" --tracing off
  one sink "$bin/bench/agent_bench" --tracing sink
  one metrics "$bin/bench/agent_bench" --tracing metrics
  one otlp "$bin/bench/agent_bench" --tracing otlp
done

node - "$results" <<'JS'
const fs = require('node:fs');
const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const median = (v) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : undefined; };
const cpu = (mode) => median(rows.filter((r) => r.mode === mode).map((r) => r.cpu_ms_per_invocation));
const off = cpu('off');
console.log('\n| workload (a), concurrency 50, in process | CPU per invocation (median) | against off | spans per invocation |');
console.log('|---|---|---|---|');
for (const [mode, label] of [['before', 'before the tracing seam'], ['off', 'tracing off'], ['sink', 'spans to a counting sink'], ['metrics', 'spans feeding the GenAI metrics'], ['otlp', 'spans exported, OTLP/HTTP protobuf']]) {
  const v = cpu(mode);
  if (v === undefined) continue;
  const spans = median(rows.filter((r) => r.mode === mode).map((r) => r.spans_per_invocation ?? 0));
  console.log(`| ${label} | ${v.toFixed(3)} ms | ${((v / off - 1) * 100).toFixed(1)}% | ${spans} |`);
}
JS
