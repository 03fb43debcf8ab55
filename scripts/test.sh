#!/usr/bin/env bash
# Set-up, build and run every test. GPU tests (CTest label `gpu`) report as skipped where no GPU
# is present. Exit status: ctest's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build=${WEFT_BUILD_DIR:-$root/build}
ctest --test-dir "$build" --output-on-failure -j "${WEFT_JOBS:-$(nproc 2>/dev/null || echo 2)}"
