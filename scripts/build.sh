#!/usr/bin/env bash
# Configures and builds Weft in ./build (or $WEFT_BUILD_DIR). Extra arguments go to cmake.
# CUDA is used when the toolkit is found (WEFT_ENABLE_CUDA=AUTO); set WEFT_ENABLE_CUDA=OFF to skip.
# WEFT_TARGETS="weftc weft-perf" builds only those targets (and what they need); empty: all.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
jobs=${WEFT_JOBS:-$(nproc 2>/dev/null || echo 2)}
cmake -S "$root" -B "$build" -G Ninja \
  -DWEFT_ENABLE_CUDA="${WEFT_ENABLE_CUDA:-AUTO}" \
  -DWEFT_WERROR="${WEFT_WERROR:-ON}" "$@"
targets=()
for target in ${WEFT_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
