# Sourced by the run_*.sh scripts: starts a test's processes, remembers their pids in `pids`, reads where they
# listen, and stops them all when the script exits (an EXIT trap set here), waiting until they are gone: a server
# still closing its SQLite file must not meet the next run's.
# A process has 60 s to say it listens: Node servers take 1 to 4 s alone, and more when the machine is busy (CTest
# runs tests two at a time, a browser among them).
#   start_listening LOG COMMAND...  a process that prints "listening on URL" first (mock-llm, the receivers):
#                                   sets listening_url
#   start_serving LOG COMMAND...    `adk web` or `adk api_server`: sets served_url (http://127.0.0.1:PORT) and
#                                   served_pid
pids=()
stop_processes() {  # SIGTERM to each, up to 5 s for all to exit, then SIGKILL
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 100); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.05
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
trap stop_processes EXIT
start_listening() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1200); do [ -s "$log" ] && break; sleep 0.05; done
  listening_url=$(sed -n '1s/^listening on //p' "$log")
  [ -n "$listening_url" ] || { echo "FAIL: $1 did not start: $(cat "$log")"; exit 1; }
}
start_serving() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 &
  served_pid=$!
  pids+=($served_pid)
  for _ in $(seq 1200); do grep -q serving "$log" 2>/dev/null && break; sleep 0.05; done
  served_url=$(sed -n 's/.* at \(http:\/\/127\.0\.0\.1:[0-9]*\)\/.*/\1/p' "$log" | head -1)
  [ -n "$served_url" ] || { echo "FAIL: $1 did not start: $(cat "$log")"; exit 1; }
}
