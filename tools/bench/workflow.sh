#!/usr/bin/env bash
# Graph workflows on adk-cpp (workflow_bench) and on @google/adk 2.0.0 (ts/workflow_bench.mjs), in one run: a
# chain of N function nodes, a fan-out of N nodes into a join, and the resume of a run of 10 x N nodes (the
# answer to the question its last node asked), N runs of one node from a workflow's entry (run_node), and a
# ParallelWorker over N items. Prints a Markdown table: the median ms per invocation, wall and
# CPU, in-memory sessions. Both are warmed up first (the TypeScript ADK is a JIT runtime).
#   tools/bench/workflow.sh [nodes] [rounds]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
nodes=${1:-100}
rounds=${2:-21}
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target workflow_bench >/dev/null
work=$root/build/release/bench_workflow
mkdir -p "$work"
cp tools/bench/ts/package.json tools/bench/ts/workflow_bench.mjs "$work/"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
  { echo "workflow.sh: npm install failed:"; cat "$work/npm.log"; exit 1; }
results=$work/results.jsonl
build/release/tools/bench/workflow_bench "$nodes" "$rounds" 5 >"$results"
# (Its logger writes warnings to standard output: the results are the lines that start with {"runtime".)
(cd "$work" && node workflow_bench.mjs "$nodes" "$rounds" 5) | grep '^{"runtime"' >>"$results"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%Y-%m-%d)"
echo
echo "| scenario | nodes | adk-cpp wall / CPU | @google/adk wall / CPU | CPU ratio |"
echo "|---|---|---|---|---|"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const ms = (v) => v >= 10 ? v.toFixed(1) + " ms" : v.toFixed(2) + " ms";
for (const s of ["chain", "fanout", "resume", "dynamic", "workers"]) {
  const c = lines.find((r) => r.runtime === "adk-cpp" && r.scenario === s);
  const t = lines.find((r) => r.runtime === "@google/adk" && r.scenario === s);
  console.log(`| ${s} | ${c.nodes} | ${ms(c.wall_ms)} / ${ms(c.cpu_ms)} | ${ms(t.wall_ms)} / ${ms(t.cpu_ms)} | ${(t.cpu_ms / c.cpu_ms).toFixed(1)}x |`);
}
' "$results"
