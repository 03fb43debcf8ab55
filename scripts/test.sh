#!/usr/bin/env bash
# Set-up, build and run every test. GPU tests (CTest label `gpu`) report as skipped where no GPU
# is present. Where nvcc built the kernels, the kernel's resource report follows (registers,
# spills, stack frame per instantiation: a report of the build, not a test). Exit status:
# ctest's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build=${WEFT_BUILD_DIR:-$root/build}
status=0
ctest --test-dir "$build" --output-on-failure -j "${WEFT_JOBS:-$(nproc 2>/dev/null || echo 2)}" ||
  status=$?
if grep -q 'kernel/types_float.cu' "$build/compile_commands.json" 2>/dev/null; then
  echo "== the interpreter kernel's resources (scripts/kernel-report.sh)"
  WEFT_BUILD_DIR="$build" bash "$root/scripts/kernel-report.sh" --build "$build" ||
    echo "test: the kernel report could not be made"
fi
exit "$status"
