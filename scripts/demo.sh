#!/usr/bin/env bash
# Set-up and the main job: compile a library algorithm to MSCCL XML, prove it correct on the CPU
# reference executor, describe it, and run it through the interpreter kernel: on the GPU when one
# is present (8 ranks emulated on one device), else in host mode (the kernel's source on CPU
# threads, results checked, timings not meaningful). Usage: scripts/demo.sh [ALGORITHM] [RANKS]
#
# It builds only what it runs (weftc and weft-perf), and without a GPU it builds them without
# CUDA: scripts/test.sh later builds everything else in the same folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
algorithm=${1:-allreduce_ring}
ranks=${2:-8}
start=$SECONDS
stage() { printf '\n== [%s, %ds] %s\n' "$1" $((SECONDS - start)) "$2"; }

stage "1/6" "set-up: the Debian packages the build needs (scripts/install-deps.sh --build)"
bash "$root/scripts/install-deps.sh" --build

gpu=no
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then gpu=yes; fi
if [ "$gpu" = yes ]; then
  stage "2/6" "build weftc and weft-perf with CUDA in $build (a GPU is present)"
  cuda=${WEFT_ENABLE_CUDA:-AUTO}
else
  stage "2/6" "build weftc and weft-perf without CUDA in $build (no GPU visible: the kernel runs on CPU threads)"
  cuda=${WEFT_ENABLE_CUDA:-OFF}
fi
WEFT_ENABLE_CUDA=$cuda WEFT_TARGETS="weftc weft-perf" bash "$root/scripts/build.sh"

weftc=$build/compiler/weftc
out=$build/demo
mkdir -p "$out"
xml=$out/${algorithm}_${ranks}.xml

stage "3/6" "weftc compile $algorithm --ranks $ranks: the library algorithm to MSCCL XML, proved before it is written"
"$weftc" compile "$algorithm" --ranks "$ranks" -o "$xml"
stage "4/6" "weftc verify $xml: every rank on the CPU reference executor, with its race proof"
"$weftc" verify "$xml"
stage "5/6" "weftc info $xml: what it is and what it costs"
"$weftc" info "$xml"

perf=$build/runtime/tools/weft-perf/weft-perf
if [ "$gpu" = yes ] && [ -f "$build/runtime/gpu/cuda/libweft_gpu.a" ]; then
  stage "6/6" "weft-perf: $ranks ranks emulated on one GPU, results checked"
  "$perf" --ranks "$ranks" --xml "$xml" -b 1K -e 64M -f 4 -c 1
else
  stage "6/6" "weft-perf --device host: the interpreter kernel on CPU threads, results checked (timings not meaningful)"
  "$perf" --device host --ranks "$ranks" --xml "$xml" -b 1K -e 256K -f 16 -n 2 -w 1 -c 1
fi
printf '\n== done in %ds. Next: scripts/test.sh builds and runs every test; README.md says more.\n' \
  $((SECONDS - start))
