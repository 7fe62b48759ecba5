#!/usr/bin/env bash
# The A2A travel sample's two processes: the flight agent served over A2A, then the travel planner that hands it the
# question (what CTest runs; run the two by hand as their comments say).
#   run.sh FLIGHT_AGENT TRAVEL_PLANNER
set -euo pipefail
log=$(mktemp)
"$1" 0 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 200); do grep -q serving "$log" && break; sleep 0.05; done
url=$(sed -n 's/^flight_agent: serving over A2A at //p' "$log")
[ -n "$url" ] || { echo "FAIL: the flight agent did not start: $(cat "$log")"; exit 1; }
"$2" "$url" "A flight from Paris to Lisbon on 18 December?"
