#!/usr/bin/env bash
# Builds the CPU parts with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and runs
# every test there. Any sanitizer report fails the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
export WEFT_BUILD_DIR=${WEFT_BUILD_DIR:-$root/build-asan}
WEFT_ENABLE_CUDA=OFF bash "$root/scripts/build.sh" -DWEFT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$WEFT_BUILD_DIR" --output-on-failure -j "${WEFT_JOBS:-2}"
