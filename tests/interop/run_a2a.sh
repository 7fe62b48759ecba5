#!/usr/bin/env bash
# The official A2A SDK (@a2a-js/sdk, npm) against adk-cpp's A2A server: a2a/a2a_sdk_client.mjs drives
# a2a_interop_server on both bindings (JSON-RPC and HTTP+JSON).
#   run_a2a.sh A2A_INTEROP_SERVER WORK_DIR
set -euo pipefail
server=$1
here=$(cd "$(dirname "$0")" && pwd)
NPM_PACKAGE_DIR=$here/a2a source "$here/npm_install.sh" "$2" a2a_sdk_client.mjs
source "$here/processes.sh"

start_listening server.log "$server" "$PWD/gate"
node a2a_sdk_client.mjs "$listening_url" "$PWD/gate"
