#!/usr/bin/env bash
# The A2A benchmark: one agent served over A2A by adk-cpp (bench_server api_server --a2a, in-memory sessions)
# and by @google/adk-devtools' `adk api_server --a2a true` (the TypeScript ADK's dev server: @google/adk 2.0.0's
# toA2a, an @a2a-js/sdk 0.3 server around its A2AAgentExecutor, in-memory sessions and tasks: its defaults), each
# against the same mock-llm, driven by the same C++ load generator (http_bench --a2a-rpc): each invocation is one
# A2A task, a streaming message in a new context, its SSE stream read to the end (which must hold the task's
# COMPLETED status). The agent is agent_bench's workload (a): a tool call, then 20 streamed chunks.
#   tools/bench/a2a.sh [quick]
# Measured at concurrency 50 and 1,000: tasks/s, p99 latency, the server's own CPU per task (utime + stime of
# all its threads, /proc/PID/stat). The TypeScript server speaks A2A 0.3 (message/stream at /a2a/APP/jsonrpc);
# adk-cpp is measured on 1.0 (SendStreamingMessage at /a2a/APP) and on the same 0.3 method, and on ADK's own
# /run_sse for the same workload. Both servers are warmed up alike: one task alone, then 300, before anything is
# measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/server_lib.sh
: >"$results"
quick=${1:-}

start_mock fast "$(weather_script "sunny " 20)"

c50=3000 c1000=5000
[ -n "$quick" ] && { c50=300; c1000=1000; }
for server in cpp ts; do
  if [ $server = cpp ]; then start_server cpp "$mock_url" --a2a; else start_server ts "$mock_url" --a2a true; fi
  for c in 50 1000; do
    n=$([ $c = 50 ] && echo $c50 || echo $c1000)
    if [ $server = cpp ]; then
      measure cpp invocations --concurrency $c --invocations "$n" --warmup 300 --a2a-rpc "$base/a2a/weather" --a2a-version 1.0
      measure cpp invocations --concurrency $c --invocations "$n" --warmup 300 --a2a-rpc "$base/a2a/weather" --a2a-version 0.3
      measure cpp invocations --concurrency $c --invocations "$n" --warmup 300
    else
      measure ts invocations --concurrency $c --invocations "$n" --warmup 300 --a2a-rpc "$base/a2a/weather/jsonrpc" --a2a-version 0.3
    fi
  done
  stop_server
done

node - "$results" <<'JS'
const fs = require('node:fs');
const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const get = (server, protocol, c) => rows.find((r) => r.server === server && r.protocol === protocol && r.concurrency === c) || {};
const fmt = (v, d = 0) => (v === undefined ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(1)}x` : '-');
console.log('\n| A2A, workload (a), one task per invocation | adk-cpp, A2A 1.0 | adk-cpp, A2A 0.3 | TypeScript ADK (adk api_server --a2a), A2A 0.3 | ratio (0.3 to 0.3) | adk-cpp, ADK /run_sse |');
console.log('|---|---|---|---|---|---|');
for (const c of [50, 1000]) {
  const a = get('cpp', 'a2a 1.0', c), b = get('cpp', 'a2a 0.3', c), t = get('ts', 'a2a 0.3', c), r = get('cpp', 'adk', c);
  console.log(`| tasks/s at concurrency ${fmt(c)} | ${fmt(a.invocations_per_s)} | ${fmt(b.invocations_per_s)} | ${fmt(t.invocations_per_s)} | ${ratio(b.invocations_per_s, t.invocations_per_s)} | ${fmt(r.invocations_per_s)} |`);
  console.log(`| p99 latency at concurrency ${fmt(c)} | ${fmt(a.latency_ms_p99, 1)} ms | ${fmt(b.latency_ms_p99, 1)} ms | ${fmt(t.latency_ms_p99, 1)} ms | ${ratio(t.latency_ms_p99, b.latency_ms_p99)} | ${fmt(r.latency_ms_p99, 1)} ms |`);
  console.log(`| server CPU per task at concurrency ${fmt(c)} | ${fmt(a.server_cpu_ms_per_invocation, 3)} ms | ${fmt(b.server_cpu_ms_per_invocation, 3)} ms | ${fmt(t.server_cpu_ms_per_invocation, 3)} ms | ${ratio(t.server_cpu_ms_per_invocation, b.server_cpu_ms_per_invocation)} | ${fmt(r.server_cpu_ms_per_invocation, 3)} ms |`);
  console.log(`| SSE events per task; failed | ${fmt(a.frames_per_invocation, 1)}; ${a.failed ?? '-'} | ${fmt(b.frames_per_invocation, 1)}; ${b.failed ?? '-'} | ${fmt(t.frames_per_invocation, 1)}; ${t.failed ?? '-'} | | ${fmt(r.frames_per_invocation, 1)}; ${r.failed ?? '-'} |`);
}
JS
