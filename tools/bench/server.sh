#!/usr/bin/env bash
# The server benchmark: one agent served over ADK's HTTP API by adk-cpp (bench_server api_server, in-memory
# sessions) and by @google/adk-devtools' `adk api_server` (the TypeScript ADK's dev server, in-memory
# sessions: its default), each against the same mock-llm, driven by the same C++ load generator
# (http_bench): create a session, POST /run_sse with "streaming": true, read every frame. The agent is
# agent_bench's workload (a): a tool call, then 20 streamed chunks. Prints one JSON line per measurement and a
# table.
#   tools/bench/server.sh [quick]
# Measured: invocations/s and p99 latency at concurrency 50 and 1,000; the server's own CPU per invocation
# (utime + stime of all its threads, /proc/PID/stat), the fair comparison on 2 cores where the load generator
# and mock-llm take their share too; and 10,000 /run_sse streams held open at once (the model stalls after
# its first chunk), with the server's RSS per open stream.
# The TypeScript server is warmed up as agent_bench.mjs is: one request alone (it bundles the agent with
# esbuild on first use), then 300 invocations, before anything is measured; adk-cpp gets the same.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/server_lib.sh
: >"$results"
quick=${1:-}

start_mock fast "$(weather_script "sunny " 20)"
fast=$mock_url
# After its first chunk the model waits 10 minutes: the streams stay open while they are counted.
start_mock stalled "$(weather_script "sunny " 2)" --chunk-delay-ms 600000
stalled=$mock_url

c50=3000 c1000=5000 streams=10000
[ -n "$quick" ] && { c50=300; c1000=1000; streams=1000; }
for server in cpp ts; do
  start_server $server "$fast"
  measure $server invocations --concurrency 50 --invocations $c50 --warmup 300
  measure $server invocations --concurrency 1000 --invocations $c1000 --warmup 300
  stop_server
  start_server $server "$stalled"
  measure $server streams --streams $streams
  stop_server
done

node - "$results" <<'EOF'
const fs = require('node:fs');
const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const get = (server, mode, concurrency) => rows.find((r) => r.server === server && r.mode === mode &&
  (concurrency === undefined || r.concurrency === concurrency)) || {};
const fmt = (v, d = 0) => (v === undefined ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(1)}x` : '-');
console.log('\n| ADK HTTP API, workload (a) | adk-cpp | TypeScript ADK (adk api_server) | ratio |');
console.log('|---|---|---|---|');
for (const c of [50, 1000]) {
  const a = get('cpp', 'invocations', c), b = get('ts', 'invocations', c);
  console.log(`| invocations/s at concurrency ${fmt(c)} | ${fmt(a.invocations_per_s)} | ${fmt(b.invocations_per_s)} | ${ratio(a.invocations_per_s, b.invocations_per_s)} |`);
  console.log(`| p99 latency at concurrency ${fmt(c)} | ${fmt(a.latency_ms_p99, 1)} ms | ${fmt(b.latency_ms_p99, 1)} ms | ${ratio(b.latency_ms_p99, a.latency_ms_p99)} |`);
  console.log(`| server CPU per invocation at concurrency ${fmt(c)} | ${fmt(a.server_cpu_ms_per_invocation, 3)} ms | ${fmt(b.server_cpu_ms_per_invocation, 3)} ms | ${ratio(b.server_cpu_ms_per_invocation, a.server_cpu_ms_per_invocation)} |`);
  console.log(`| frames per invocation; failed | ${fmt(a.frames_per_invocation, 1)}; ${a.failed ?? '-'} | ${fmt(b.frames_per_invocation, 1)}; ${b.failed ?? '-'} | |`);
}
const s = get('cpp', 'streams'), t = get('ts', 'streams');
console.log(`| /run_sse streams held open (of ${fmt(s.streams)}) | ${fmt(s.open)} | ${fmt(t.open)} | |`);
console.log(`| server RSS per open stream | ${fmt(s.server_kib_per_stream, 1)} KiB | ${fmt(t.server_kib_per_stream, 1)} KiB | ${ratio(t.server_kib_per_stream, s.server_kib_per_stream)} |`);
EOF
