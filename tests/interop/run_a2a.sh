#!/usr/bin/env bash
# The official A2A SDK (@a2a-js/sdk, npm) both ways, on both bindings (JSON-RPC and HTTP+JSON):
#  - its clients (a2a/a2a_sdk_client.mjs) against adk-cpp's A2A server (a2a_interop_server);
#  - @google/adk's RemoteA2AAgent (A2A 0.3; a2a/adk_remote_agent.mjs) against the same server;
#  - adk-cpp's RemoteA2aAgent (a2a_remote_client) against agents built with its server (a2a/sdk_server.mjs), and
#    against an agent served over A2A 0.3 by @google/adk's own server (toA2a; a2a/adk_server.mjs).
#   run_a2a.sh A2A_INTEROP_SERVER A2A_REMOTE_CLIENT WORK_DIR
set -euo pipefail
server=$1 remote_client=$2
here=$(cd "$(dirname "$0")" && pwd)
NPM_PACKAGE_DIR=$here/a2a source "$here/npm_install.sh" "$3" a2a_sdk_client.mjs sdk_server.mjs adk_remote_agent.mjs \
  adk_server.mjs
source "$here/processes.sh"

# The client's webhook listens on a port free now; the server may post only under it.
hook_port=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")
start_listening server.log "$server" "$PWD/gate" "http://127.0.0.1:$hook_port/hooks/"
node a2a_sdk_client.mjs "$listening_url" "$PWD/gate" "$hook_port"
node adk_remote_agent.mjs "$listening_url"

start_listening sdk_server.log node sdk_server.mjs
sdk_url=$listening_url
start_listening adk_server.log node adk_server.mjs
"$remote_client" "$sdk_url" "$listening_url"
