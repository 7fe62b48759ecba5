#!/usr/bin/env bash
# Installs the Debian 12 packages adk-cpp builds with, when any is missing. Safe to run again.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache
  lld                                          # links four times faster than ld.bfd (CMakeLists.txt: ADK_USE_LLD)
  valgrind                                     # instructions.sh and chunk_misses.sh in tools/bench: callgrind
  libboost1.81-all-dev libboost-json1.81-dev   # Boost 1.81: Asio's experimental channel; JSON is separate
  libssl-dev openssl curl catch2
  libsqlite3-dev                               # adk::sqlite: sessions and memory in an SQLite file
  libmimalloc-dev                              # the allocator adk's programs link (cmake/AdkAllocator.cmake)
  libpq-dev postgresql                         # adk::postgres, and the PostgreSQL server its tests start
  clang-14 libclang-rt-14-dev                  # the libFuzzer targets (tools/fuzz.sh): clang and libFuzzer
  libyaml-cpp-dev                              # adk::cli reads ADK's agent-config YAML
  chromium                                     # the browser test drives the ADK web UI (tests/interop/web_ui)
  python3 procps                               # the MCP interop scripts pick free ports and look for processes
  bubblewrap                                   # SandboxedCodeExecutor runs the model's Python in bwrap
  prometheus                                   # the metrics test: Prometheus scrapes /metrics (tests/interop)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm drive the interop tests (official SDKs from the npm registry); any Node.js >= 20 will do.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "setup: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The ADK web UI's static files, for `adk web` and the browser test: fetched once into the cache. Without the
# npm registry `adk web` says where to put them, and the browser test skips.
"$(dirname "$0")/fetch_web_ui.sh" >/dev/null || echo "setup: the ADK web UI could not be fetched (see above); adk web needs --ui_dir" >&2
