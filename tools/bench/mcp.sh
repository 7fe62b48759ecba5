#!/usr/bin/env bash
# Tool calls to @modelcontextprotocol/server-everything's `echo`, through adk-cpp's MCP client (mcp_bench) and
# through @google/adk 2.0.0's MCPToolset (ts/mcp_bench.mjs), over stdio and over Streamable HTTP, in one run;
# prints a Markdown table. Client CPU per call is the caller's own process; the server's CPU is reported apart.
#   tools/bench/mcp.sh [quick]
# Both are warmed up first (the TypeScript ADK is a JIT runtime). @google/adk's MCPTool opens a new MCP session
# for every call (over stdio: a new server process) and closes it after, as its source does; it is measured so.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target mcp_bench >/dev/null
work=$root/build/release/bench_mcp
mkdir -p "$work"
cp tools/bench/ts/package.json tools/bench/ts/mcp_bench.mjs "$work/"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
  { echo "mcp.sh: npm install failed:"; cat "$work/npm.log"; exit 1; }
server=$work/node_modules/.bin/mcp-server-everything
scale=1
[ "${1:-}" = quick ] && scale=10
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
results=$work/results.jsonl
: >"$results"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$port "$server" streamableHttp >"$work/server.log" 2>&1 &
server_pid=$!
pids+=($server_pid)
for _ in $(seq 200); do grep -q "$port" "$work/server.log" && break; sleep 0.05; done
url=http://127.0.0.1:$port/mcp

cpp=build/release/tools/bench/mcp_bench
# (Its logger writes errors to standard output: the result is the line that starts with {"runtime".)
ts() { (cd "$work" && node mcp_bench.mjs "$@") | grep '^{"runtime"'; }
for c in 1 8; do
  "$cpp" --calls $((4000 / scale)) --concurrency $c --warmup 200 --stdio "$server" stdio >>"$results"
  ts --calls $((80 / scale)) --concurrency $c --warmup 8 --stdio "$server" stdio >>"$results"
  "$cpp" --calls $((4000 / scale)) --concurrency $c --warmup 200 --http "$url" --server-pid "$server_pid" >>"$results"
  ts --calls $((2000 / scale)) --concurrency $c --warmup 200 --http "$url" --server-pid "$server_pid" >>"$results"
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%Y-%m-%d)"
echo
echo "| runtime | transport | concurrency | calls | calls/s | client CPU per call | p50 / p99 latency | server CPU per call |"
echo "|---|---|---|---|---|---|---|---|"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const us = (v) => v >= 1000 ? (v / 1000).toFixed(1) + " ms" : v.toFixed(0) + " us";
for (const r of lines)
  console.log(`| ${r.runtime} | ${r.transport} | ${r.concurrency} | ${r.calls}${r.failures ? ` (${r.failures} failed)` : ""} | ` +
              `${r.calls_per_s.toFixed(0)} | ${us(r.client_cpu_us_per_call)} | ${us(r.p50_us)} / ${us(r.p99_us)} | ${us(r.server_cpu_us_per_call)} |`);
' "$results"
