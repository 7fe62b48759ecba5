#!/usr/bin/env bash
# What clients that never read make the server hold (issue 29, defect 9): 60 clients each start a /run_sse
# ("streaming": true) whose answer is 2 MiB of text in 256 chunks of 8 KiB, on sockets whose receive buffer is
# 4 KiB, and read nothing. http_bench's `stuck` mode samples the server's RSS every 50 ms for 20 s (the runs
# finish within them); the figure is (peak - before) / clients. adk-cpp's release build (bench_server, the
# weather agent of server.sh), once on in-memory sessions (which keep every 2 MiB answer: that is stored data,
# not what a run holds) and once on SQLite (answers on disk), beside the TypeScript server (in-memory sessions,
# its default; warmed up with one invocation read to the end first). Then the same with clients that read
# everything (http_bench --drain): the difference is what not reading makes the server hold. RSS peaks count
# what malloc took and did not give back, so the transient copies of each run (the streamed text, the event, its
# JSON) are in both.
#   tools/bench/stuck_clients.sh [CLIENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
clients=${1:-60}
source tools/bench/server_lib.sh
: >"$results"

chunk=$(head -c 8192 /dev/zero | tr '\0' 'x')
start_mock stuck "$(weather_script "$chunk" 256)"
stuck_mock=$mock_url

run() {  # cpp|sqlite|ts NAME [--drain]
  start_server "$1" "$stuck_mock"
  # One invocation read to the end: the TypeScript server bundles its agent on first use.
  local session
  session=$(curl -sf -X POST -H 'content-type: application/json' -d '{}' "$base/apps/weather/users/u/sessions" |
    sed 's/.*"id":"\([^"]*\)".*/\1/')
  curl -sf -o /dev/null -X POST -H 'content-type: application/json' "$base/run_sse" -d \
    "{\"appName\":\"weather\",\"userId\":\"u\",\"sessionId\":\"$session\",\"streaming\":true,\"newMessage\":{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}}"
  "$bin/bench/http_bench" --url "$base" --app weather --server-pid "$server_pid" stuck --clients "$clients" \
    --seconds 20 ${3:-} | sed "s/^{/{\"server\":\"$2\",/" | tee -a "$results"
  stop_server
}
for drain in "" --drain; do
  run cpp adk-cpp-memory $drain
  run sqlite adk-cpp-sqlite $drain
  run ts typescript $drain
done

node - "$results" <<'EOF'
const fs = require('node:fs');
const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
console.log(`\n| ${rows[0].clients} clients, 2 MiB answers | clients | RSS before | peak | per client | held by not reading |`);
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  const read = rows.find((o) => o.server === r.server && o.mode === 'drained');
  const held = r.mode === 'stuck' && read ? `${(r.server_mib_per_client_peak - read.server_mib_per_client_peak).toFixed(2)} MiB` : '';
  console.log(`| ${r.server} | ${r.mode === 'stuck' ? 'never read' : 'read everything'} | ${r.server_rss_mib_before.toFixed(0)} MiB | ${r.server_rss_mib_peak.toFixed(0)} MiB | ${r.server_mib_per_client_peak.toFixed(2)} MiB | ${held} |`);
}
EOF
