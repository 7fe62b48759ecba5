#!/usr/bin/env bash
# The same graph workflow run by @google/adk (npm) and by adk-cpp, for each of two messages (one per route): each
# node's outputs, authors, routes, outputFor and texts must agree (adk_workflow/workflow_parity.mjs says how they
# are compared; the separators of node paths differ: ADK TypeScript writes "parity.fix", adk-cpp and ADK Python
# "parity@1/fix@1").
#   run_adk_workflow.sh WORKFLOW_PARITY WORK_DIR
set -euo pipefail
program=$1
here=$(cd "$(dirname "$0")" && pwd)
NPM_PACKAGE_DIR=$here/adk_workflow source "$here/npm_install.sh" "$2" workflow_parity.mjs

for message in "a bug report" "a question"; do
  name=${message// /_}
  node workflow_parity.mjs run "$message" "adk_$name.json" >adk_$name.log 2>&1 || { cat "adk_$name.log"; exit 1; }
  "$program" "$message" "cpp_$name.json"
  if node workflow_parity.mjs compare "adk_$name.json" "cpp_$name.json"; then
    echo "PASS: \"$message\": @google/adk and adk-cpp agree"
  else
    echo "FAIL: \"$message\""; exit 1
  fi
done
echo "adk workflow interop: PASS"
