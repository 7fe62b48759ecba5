#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, on Node 22 from npm) runs each client
# scenario given against mcp_conformance_client, an agent whose tools are an McpToolset on the scenario's server.
# Prints a result table (results.md in WORK_DIR) and "mcp conformance: PASS" when every scenario passed.
#   run_mcp_conformance.sh CLIENT WORK_DIR SCENARIO...
set -euo pipefail
client=$1 work=$2
shift 2
NPM_PACKAGE_DIR="$(cd "$(dirname "$0")" && pwd)/mcp" source "$(dirname "$0")/npm_install.sh" "$work"
export PATH="$PWD/node_modules/.bin:$PATH"
node --version | grep -q '^v22\.' || { echo "FAIL: node 22 from npm is not first in PATH ($(node --version))"; exit 1; }
version=$(node -p 'require("@modelcontextprotocol/conformance/package.json").version')

failed=0
{
  echo "| scenario | checks passed | result |"
  echo "|---|---|---|"
} >results.md
for scenario in "$@"; do
  log="scenario-$(echo "$scenario" | tr '/' '-').log"
  set +e
  timeout 300 conformance client --command "$client" --scenario "$scenario" --timeout 60000 >"$log" 2>&1
  status=$?
  set -e
  passed=$(sed -n 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/p' "$log" | tail -1)
  if [ "$status" = 0 ] && grep -q "OVERALL: PASSED" "$log"; then
    echo "| $scenario | $passed | pass |" >>results.md
  else
    echo "| $scenario | ${passed:-none} | FAIL |" >>results.md
    echo "FAIL: scenario $scenario (exit $status):"
    sed 's/\x1b\[[0-9;]*m//g' "$log" | tail -40
    failed=$((failed + 1))
  fi
done
echo "@modelcontextprotocol/conformance $version, client scenarios, $(date -u +%F):"
cat results.md
[ "$failed" = 0 ] || { echo "FAIL: $failed of $# scenarios failed"; exit 1; }
echo "mcp conformance: PASS"
