# What the server benchmarks share (sourced by server.sh, pace.sh and stuck_clients.sh in tools/bench): the release
# build of mock-llm, http_bench and bench_server, @google/adk-devtools installed from npm beside the TypeScript
# agent (installed when the ts server is first started), and functions that start mock-llm and either server, and
# run http_bench against it.
#   weather_script TEXT REPEAT                         mock-llm's script for the weather agent: the tool call,
#                                                       then an answer of REPEAT chunks of TEXT ({t}: mock-llm's
#                                                       count, or its time stamp with --stamp)
#   start_mock NAME SCRIPT_JSON [mock-llm options]    sets $mock_url
#   start_server cpp|sqlite|tls|ts|floor MOCK_URL [SERVER_ARGS...] sets $server_pid and $base (a fresh port each time);
#                                                       SERVER_ARGS go to either server (--a2a); the C++ servers run
#                                                       under the command in the array $server_prefix when it has one
#                                                       (valgrind, in chunk_misses.sh)
#   make_mock_certificate                               sets $mock_tls: mock-llm's options to serve HTTPS
#   stop_server
#   measure cpp|sqlite|tls|ts|floor HTTP_BENCH_ARGS...      one JSON line, tagged with the server, into $results
# cpp is bench_server api_server on in-memory sessions, sqlite the same on a fresh SQLite file, tls the same as cpp
# trusting the certificate of make_mock_certificate (a mock-llm serving HTTPS, as hosted models are reached), ts
# @google/adk-devtools' `adk api_server` (in-memory sessions, its default), floor relay_floor (what carrying a
# paced chunk costs any server: one wait, one read, one write; no agent; paced streams only). Every process
# started is stopped when the script exits. BENCH_SERVER names another bench_server binary for cpp, sqlite and
# tls (a build kept from before a change, to measure both in one sitting).
root=$PWD
source tools/listening.sh
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target mock-llm http_bench bench_server relay_floor >/dev/null
bin=$root/build/release/tools
work=$root/build/release/bench_server
mkdir -p "$work"
# @google/adk-devtools and the TypeScript agent: installed when a script first starts the ts server.
install_ts_server() {
  [ -x "$work/node_modules/.bin/adk" ] && [ -d "$work/agents/weather" ] && return
  mkdir -p "$work/agents"
  cp tools/bench/ts/package.json "$work/"
  cp -r tools/bench/ts/server_agents/weather "$work/agents/"
  (cd "$work" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
    { echo "$0: npm install of @google/adk-devtools failed:"; cat "$work/npm.log"; exit 1; }
}
# Open streams take a socket each at the generator, two at the server, one at the mock.
ulimit -n "$(ulimit -Hn)"

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
weather_script() {
  echo "{\"turns\": [{\"function_calls\": [{\"name\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}]}," \
    "{\"chunks\": [\"$1\"], \"repeat\": $2}]}"
}
start_mock() {
  local log=$work/mock_$1.log
  echo "$2" >"$work/script_$1.json"
  start_listening "mock-llm $1" "$log" "$bin/mock_llm/mock-llm" --script "$work/script_$1.json" "${@:3}"
  pids+=($listening_pid)
  mock_url=$listening_url
}

# A certificate for 127.0.0.1 that mock-llm serves HTTPS with and the tls server trusts (SSL_CERT_FILE).
make_mock_certificate() {
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/mock_key.pem" -out "$work/mock_cert.pem" >/dev/null 2>&1 ||
    { echo "$0: openssl could not make the mock's certificate" >&2; exit 1; }
  mock_tls=(--tls --cert "$work/mock_cert.pem" --key "$work/mock_key.pem")
}

port=18200
server_pid=""
server_prefix=()
start_server() {
  port=$((port + 1))
  base=http://127.0.0.1:$port
  local log=$work/server_$1_$port.log
  case $1 in
    cpp | sqlite | tls)
      local sessions=memory:// trust=()
      if [ "$1" = sqlite ]; then
        rm -f "$work/sessions.db"*
        sessions=sqlite:///$work/sessions.db  # four slashes: an absolute path
      fi
      [ "$1" = tls ] && trust=(SSL_CERT_FILE="$work/mock_cert.pem")
      env "${trust[@]}" GOOGLE_GEMINI_BASE_URL="$2" "${server_prefix[@]}" \
        "${BENCH_SERVER:-$root/build/release/tools/bench/bench_server}" api_server --port "$port" \
        --session_service_uri "$sessions" --artifact_service_uri memory:// --log_level error "${@:3}" >"$log" 2>&1 &
      ;;
    floor)
      "${server_prefix[@]}" "$root/build/release/tools/bench/relay_floor" --port "$port" --upstream "$2" >"$log" 2>&1 &
      ;;
    ts)
      install_ts_server
      (cd "$work" && GOOGLE_GEMINI_BASE_URL=$2 GEMINI_API_KEY=bench exec ./node_modules/.bin/adk api_server \
        --host 127.0.0.1 --port "$port" --log_level error "${@:3}" agents) >"$log" 2>&1 &
      ;;
  esac
  server_pid=$!
  pids+=($server_pid)
  for _ in $(seq 600); do curl -sf "$base/list-apps" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "$0: the $1 server did not start: $(tail -5 "$log")" >&2
  exit 1
}
stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}
results=$work/results.jsonl
measure() {
  local out
  out=$("$bin/bench/http_bench" --url "$base" --app weather --server-pid "$server_pid" "${@:2}") ||
    echo "$0: $1: some invocations failed" >&2
  printf '%s\n' "$out" | sed "s/^{/{\"server\":\"$1\",/" | tee -a "$results"
}
