# Sourced by the scripts that start a server printing "listening on URL" as its first line (mock-llm, the OTLP
# receiver of tests/interop/otlp):
#   start_listening NAME LOG COMMAND [ARGS...]
# starts COMMAND in the background with its output in LOG and waits for that line: sets $listening_pid and
# $listening_url, or stops the script with LOG's last lines when the server exits or says nothing for 10 s. LOG is
# removed first: a line left in it by an earlier run would be read before the new process empties the file.
start_listening() {
  local name=$1 log=$2
  rm -f "$log"
  "${@:3}" >"$log" 2>&1 &
  listening_pid=$!
  listening_url=
  for _ in $(seq 200); do
    listening_url=$(sed -n '1s/^listening on //p' "$log" 2>/dev/null)
    [ -n "$listening_url" ] && return
    kill -0 "$listening_pid" 2>/dev/null || break
    sleep 0.05
  done
  kill "$listening_pid" 2>/dev/null || true
  echo "$0: $name did not start: $(tail -3 "$log" 2>/dev/null)" >&2
  exit 1
}
