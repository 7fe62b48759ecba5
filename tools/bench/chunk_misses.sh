#!/usr/bin/env bash
# What a paced chunk costs the server in instructions and cache misses, adk-cpp (bench_server api_server, in-memory
# sessions, workload (a)) beside the floor (relay_floor: one wait, one read, one write a chunk), counted by
# callgrind with its cache simulation, so that a change can be measured without the noise of a shared host's CPU
# time. STREAMS paced streams (1 chunk a second each, spread over the second by mock-llm) are opened; once they
# stream, the counts of a window of WINDOW_SECONDS are taken. The simulated last-level cache is LL_BYTES (8 MiB by
# default), less than the streams' memory (about 45 KiB each), as on a host where many streams share the cache.
# The chunks of the window are the partial frames http_bench read in it (the line says how many the window should
# hold, so that a server that fell behind under valgrind shows).
#   tools/bench/chunk_misses.sh                       both servers, the release build
#   tools/bench/chunk_misses.sh cpp [BENCH_SERVER]    adk-cpp only, optionally another bench_server binary (a build
#                                                     kept from before a change)
#   STREAMS=600 WINDOW_SECONDS=20 LL_BYTES=8388608 TOP=25 tools/bench/chunk_misses.sh
#                                                     the defaults; TOP: the functions with the most
#                                                     instruction-cache misses, self cost per chunk (none by default)
#   KEEP=DIR tools/bench/chunk_misses.sh              callgrind's files of the window left in DIR (callgrind_annotate,
#                                                     kcachegrind), as DIR/NAME.callgrind
# Prints, per server: instructions, first-level instruction misses, first-level data misses (read + write) and
# last-level misses (data, read + write) per chunk. On a quiet machine the same build's counts stay within about
# 1% from run to run (last-level misses 10%); on a busy one the server, slowed, takes several chunks a wake-up and
# each costs less (a run beside the test suite counted 16,900 instructions and 750 instruction misses a chunk
# against 17,300-17,500 and 920 quiet): compare builds run back to back on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
which=${1:-both}
bench_server=${2:-$PWD/build/release/tools/bench/bench_server}
streams=${STREAMS:-600} seconds=${WINDOW_SECONDS:-20} ll=${LL_BYTES:-8388608} top=${TOP:-0}
source tools/bench/server_lib.sh  # the release build, start_mock, start_server with $server_prefix
command -v valgrind >/dev/null || { echo "chunk_misses.sh: valgrind is missing (tools/setup.sh installs it)" >&2; exit 1; }
work=$work/chunk_misses
rm -rf "$work" && mkdir -p "$work"
# Each stream takes a socket at http_bench, two at the server, one at the mock.
[ $((streams * 2 + 100)) -le "$(ulimit -n)" ] || { echo "chunk_misses.sh: $streams streams need $((streams * 2 + 100)) descriptors; the limit is $(ulimit -n)" >&2; exit 1; }

# The answer outlasts opening the streams under valgrind and the window: 600 chunks, one a second.
start_mock paced "$(weather_script "stamp:{t} " 600)" --chunk-delay-ms 1000 --spread-chunks --stamp

measure() {  # NAME cpp|floor
  local name=$1 out=$work/cg.$1
  server_prefix=(valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL="$ll",16,64
    --callgrind-out-file="$out")
  BENCH_SERVER=$bench_server start_server "$2" "$mock_url"
  local server=$server_pid
  # http_bench opens the streams, waits until each has its first partial frame, settles, then says when its window
  # starts and ends: callgrind's counts are zeroed at the start and written at the end.
  local window=$work/window.$name
  : >"$window"
  "$bin/bench/http_bench" --url "$base" --app weather --server-pid "$server" paced \
    --concurrency "$streams" --seconds "$seconds" --settle 5 --window-file "$window" >"$work/load.$name" 2>&1 &
  local load=$!
  pids+=($load)
  local phase
  for phase in start end; do
    until grep -qx "$phase" "$window"; do
      kill -0 "$load" 2>/dev/null || { echo "chunk_misses.sh: $name: http_bench ended: $(tail -3 "$work/load.$name")" >&2; exit 1; }
      sleep 0.05
    done
    if [ "$phase" = start ]; then callgrind_control -z "$server" >/dev/null 2>&1; else callgrind_control -d "$server" >/dev/null 2>&1; fi
  done
  wait "$load" || { echo "chunk_misses.sh: $name: some streams failed: $(tail -3 "$work/load.$name")" >&2; exit 1; }
  stop_server
  server_prefix=()
  local part=$out.1
  [ -s "$part" ] || { echo "chunk_misses.sh: $name: callgrind wrote no dump" >&2; exit 1; }
  # The chunks of the window: the partial frames http_bench read in it.
  local chunks
  chunks=$(sed -n 's/.*"chunks":\([0-9]*\).*/\1/p' "$work/load.$name")
  [ -n "$chunks" ] && [ "$chunks" -gt 0 ] || { echo "chunk_misses.sh: $name: no chunk in the window: $(tail -3 "$work/load.$name")" >&2; exit 1; }
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$part" "$KEEP/$name.callgrind"
  # summary: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw (trailing zeros left out)
  read -r ir _ _ i1 d1r d1w _ llr llw < <(sed -n 's/^summary: //p' "$part" | awk '{ for (i = NF + 1; i <= 9; i++) $i = 0; print }')
  awk -v n="$name" -v c="$chunks" -v want=$((streams * seconds)) -v ir="$ir" -v i1="$i1" -v d1=$((d1r + d1w)) -v ll=$((llr + llw)) \
    'BEGIN { printf "| %s | %d (%d expected) | %.0f | %.1f | %.1f | %.2f |\n", n, c, want, ir / c, i1 / c, d1 / c, ll / c }' >>"$work/table"
  if [ "$top" -gt 0 ]; then
    echo "$name, the $top functions with the most instruction-cache misses (self, per chunk: Ir I1mr D1mr+D1mw DLmr+DLmw):" >>"$work/top"
    callgrind_annotate --inclusive=no --threshold=100 --show=Ir,I1mr,D1mr,D1mw,DLmr,DLmw --sort=I1mr "$part" \
      >"$work/self.$name" 2>/dev/null
    sed -E 's/\( *[0-9.]+%\)//g' "$work/self.$name" | grep -E '^ *[0-9,]+ ' |
      grep -v -E 'PROGRAM TOTALS|libc-start|below main|io_context::run|run_main|cli\.cpp|serve\.cpp|bench_server\.cpp:main|relay_floor\.cpp:main|ld-linux' |
      awk -v c="$chunks" -v top="$top" '{ for (i = 1; i <= 6; i++) { gsub(",", "", $i); if ($i == ".") $i = 0 }
        if ($2 == 0 || ++shown > top) next
        f = ""; for (i = 7; i <= NF; i++) f = f " " $i
        printf "  %7.0f %6.1f %6.1f %5.2f %s\n", $1 / c, $2 / c, ($3 + $4) / c, ($5 + $6) / c, substr(f, 1, 140) }' >>"$work/top"
  fi
}

if [ "$which" = both ] || [ "$which" = cpp ]; then
  measure adk-cpp cpp
fi
if [ "$which" = both ] || [ "$which" = floor ]; then
  measure floor floor
fi
echo "$streams streams at 1 chunk a second, a window of $seconds s; simulated caches: 32 KiB L1 (instructions, data), $((ll / 1048576)) MiB last level"
echo "| server | chunks in the window | instructions a chunk | L1 instruction misses | L1 data misses | last-level misses |"
echo "|---|---|---|---|---|---|"
cat "$work/table"
[ "$top" -gt 0 ] && cat "$work/top"
exit 0
