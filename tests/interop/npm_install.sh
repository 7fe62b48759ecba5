# Sourced by the run_*.sh scripts: copies package.json and the given files into WORK_DIR and runs
# npm install there. They come from tests/interop, or from NPM_PACKAGE_DIR when it is set. Exits 77 (CTest: skipped) with the reason when Node.js is missing or the npm registry
# cannot be reached.
#   source npm_install.sh WORK_DIR FILE...
interop_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
package_dir=${NPM_PACKAGE_DIR:-$interop_dir}
npm_work=$1
shift
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "SKIPPED: node and npm are not installed (tools/setup.sh installs them)"
  exit 77
fi
mkdir -p "$npm_work"
cp "$package_dir/package.json" "$npm_work/"
for f in "$@"; do cp "$package_dir/$f" "$npm_work/"; done
cd "$npm_work"
if ! timeout 600 npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1; then
  reason=$(grep -m1 -E 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|network' npm.log || true)
  if [ -n "$reason" ]; then
    echo "SKIPPED: the npm registry cannot be reached: $reason"
    exit 77
  fi
  echo "FAIL: npm install failed:"
  cat npm.log
  exit 1
fi
