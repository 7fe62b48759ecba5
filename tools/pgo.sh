#!/usr/bin/env bash
# Profile-guided optimization (GCC, cmake/AdkProfile.cmake): the adk command and bench_server built in build/pgo,
# first instrumented (-DADK_PGO=generate), then trained on what a server does (bench_server api_server with
# workload (a): paced /run_sse streams on in-memory sessions, on SQLite and with the model over TLS, and bursts of
# invocations at concurrency 50 and 1,000, driven by http_bench against mock-llm), then built again with the
# profiles (-DADK_PGO=use). The release preset's flags otherwise, without debug information (-g changes no code
# GCC generates, and the two builds take a third less time without it).
#   tools/pgo.sh                 build/pgo/tools/adk/adk and build/pgo/tools/bench/bench_server
#   BENCH_SERVER=$PWD/build/pgo/tools/bench/bench_server tools/bench/pace.sh     measure it (or chunk_misses.sh
#                                cpp build/pgo/tools/bench/bench_server)
# Takes about as long as two release builds of the server plus two minutes of training. Your own program trains the
# same way: configure it with -DADK_PGO=generate, run it on its own work, configure it again with -DADK_PGO=use.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bench/server_lib.sh  # the release build's mock-llm and http_bench (not instrumented), the servers
dir=$root/build/pgo
profiles=$dir/pgo-profiles
targets=(adk_program bench_server)
configure() {
  cmake --preset release -B "$dir" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DADK_BUILD_TESTS=OFF \
    -DADK_BUILD_SAMPLES=OFF -DADK_PGO="$1" -DADK_PGO_DIR="$profiles" >/dev/null
}

rm -rf "$profiles"
configure generate
cmake --build "$dir" --target "${targets[@]}"
export BENCH_SERVER=$dir/tools/bench/bench_server  # start_server's cpp, sqlite and tls

start_mock paced "$(weather_script "stamp:{t} " 1000)" --chunk-delay-ms 50 \
  --spread-chunks --stamp
paced=$mock_url
make_mock_certificate
start_mock paced_tls "$(weather_script "stamp:{t} " 1000)" --chunk-delay-ms 50 \
  --spread-chunks --stamp "${mock_tls[@]}"
paced_tls=$mock_url
start_mock burst "$(weather_script "w{t} " 20)" --stamp
burst=$mock_url

train() {  # SERVER MOCK_URL HTTP_BENCH_ARGS...
  start_server "$1" "$2"
  "$bin/bench/http_bench" --url "$base" --app weather --server-pid "$server_pid" "${@:3}" >/dev/null ||
    { echo "pgo.sh: training on $1 ($*) failed" >&2; exit 1; }
  stop_server  # SIGTERM: the server stops its runs and returns from main, which writes the profiles
}
echo "pgo.sh: training"
train cpp "$paced" paced --concurrency 300 --seconds 20 --settle 1
train sqlite "$paced" paced --concurrency 50 --seconds 5 --settle 1
train tls "$paced_tls" paced --concurrency 50 --seconds 5 --settle 1
train cpp "$burst" invocations --concurrency 50 --invocations 3000
train cpp "$burst" invocations --concurrency 1000 --invocations 3000
[ -n "$(find "$profiles" -name '*.gcda' -print -quit 2>/dev/null)" ] ||
  { echo "pgo.sh: the training wrote no profiles into $profiles (did the server exit through main?)" >&2; exit 1; }

configure use
cmake --build "$dir" --target "${targets[@]}"
echo "pgo.sh: built $dir/tools/adk/adk and $BENCH_SERVER with the profiles in $profiles"
