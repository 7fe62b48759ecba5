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
root=$PWD
clients=${1:-60}
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target mock-llm http_bench bench_server >/dev/null
bin=$root/build/release/tools
work=$root/build/release/stuck_clients
mkdir -p "$work/agents"
cp tools/bench/ts/package.json "$work/"
cp -r tools/bench/ts/server_agents/weather "$work/agents/"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
  { echo "stuck_clients.sh: npm install of @google/adk-devtools failed:"; cat "$work/npm.log"; exit 1; }

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
chunk=$(head -c 8192 /dev/zero | tr '\0' 'x')
echo "{\"turns\": [{\"function_calls\": [{\"name\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}]}," \
  "{\"chunks\": [\"$chunk\"], \"repeat\": 256}]}" >"$work/script.json"
"$bin/mock_llm/mock-llm" --script "$work/script.json" >"$work/mock.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/mock.log" ] && break; sleep 0.05; done
mock_url=$(sed -n '1s/^listening on //p' "$work/mock.log")

port=18300
results=$work/results.jsonl
: >"$results"
run() {  # NAME cpp|ts SESSION_URI [--drain]
  port=$((port + 1))
  local base=http://127.0.0.1:$port log=$work/server_$1.log pid
  if [ "$2" = cpp ]; then
    rm -f "$work/sessions.db"*
    GOOGLE_GEMINI_BASE_URL=$mock_url "$root/build/release/tools/bench/bench_server" api_server --port "$port" \
      --session_service_uri "$3" --artifact_service_uri memory:// --log_level error >"$log" 2>&1 &
  else
    (cd "$work" && GOOGLE_GEMINI_BASE_URL=$mock_url GEMINI_API_KEY=bench exec ./node_modules/.bin/adk api_server \
      --host 127.0.0.1 --port "$port" --log_level error agents) >"$log" 2>&1 &
  fi
  pid=$!
  pids+=($pid)
  for _ in $(seq 300); do curl -sf "$base/list-apps" >/dev/null 2>&1 && break; sleep 0.1; done
  # One invocation read to the end: the TypeScript server bundles its agent on first use.
  local session
  session=$(curl -sf -X POST -H 'content-type: application/json' -d '{}' "$base/apps/weather/users/u/sessions" |
    sed 's/.*"id":"\([^"]*\)".*/\1/')
  curl -sf -o /dev/null -X POST -H 'content-type: application/json' "$base/run_sse" -d \
    "{\"appName\":\"weather\",\"userId\":\"u\",\"sessionId\":\"$session\",\"streaming\":true,\"newMessage\":{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}}"
  "$bin/bench/http_bench" --url "$base" --app weather --server-pid "$pid" stuck --clients "$clients" --seconds 20 ${4:-} |
    sed "s/^{/{\"server\":\"$1\",/" | tee -a "$results"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
for drain in "" --drain; do
  run adk-cpp-memory cpp memory:// $drain
  run adk-cpp-sqlite cpp "sqlite:///$work/sessions.db" $drain
  run typescript ts "" $drain
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
