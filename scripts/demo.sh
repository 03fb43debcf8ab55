#!/usr/bin/env bash
# Set-up and the main job: compile a library algorithm to MSCCL XML, prove it correct on the CPU
# reference executor, describe it, and run it through the interpreter kernel: on the GPU when one
# is present (8 ranks emulated on one device), else in host mode (the kernel's source on CPU
# threads, results checked, timings not meaningful). Usage: scripts/demo.sh [ALGORITHM] [RANKS]
#
# It builds only what it runs (weftc and weft-perf), and says up front how long that takes. A new
# build folder without a GPU builds them without CUDA; a folder already configured keeps its
# setting, so that running the demo after scripts/test.sh rebuilds nothing.
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
# A folder already configured (scripts/test.sh ran first, say) keeps its CUDA setting: switching
# it would rebuild what is built. A new folder builds without CUDA when no GPU is visible, which
# is faster, and scripts/test.sh later builds the rest in the same folder.
cached=$(sed -n 's/^WEFT_ENABLE_CUDA:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [ -n "${WEFT_ENABLE_CUDA:-}" ]; then
  cuda=$WEFT_ENABLE_CUDA
elif [ -n "$cached" ]; then
  cuda=$cached
elif [ "$gpu" = yes ]; then
  cuda=AUTO
else
  cuda=OFF
fi
if [ -f "$build/tools/weftc/weftc" ] && [ -f "$build/runtime/tools/weft-perf/weft-perf" ]; then
  took="seconds: they are built already"
else
  # Measured on a 2-core machine from a fresh clone (scripts/demo.sh, 2026-11-26: 321 s).
  took="about 5 minutes on 2 cores the first time, without CUDA; more with it"
fi
case "$gpu,$cuda" in
  yes,OFF) what="without CUDA (WEFT_ENABLE_CUDA=OFF): the kernel runs on CPU threads" ;;
  yes,*) what="with CUDA (a GPU is present)" ;;
  no,OFF) what="without CUDA (no GPU visible: the kernel runs on CPU threads)" ;;
  *) what="as the folder is configured (WEFT_ENABLE_CUDA=$cuda; no GPU visible: the kernel runs on CPU threads)" ;;
esac
stage "2/6" "build weftc and weft-perf $what in $build ($took)"
WEFT_ENABLE_CUDA=$cuda WEFT_TARGETS="weftc weft-perf" bash "$root/scripts/build.sh"

weftc=$build/tools/weftc/weftc
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
# weft-perf's table has out-of-place and in-place columns, as nccl-tests' does; an XML serves the
# call modes it was compiled for.
if grep -q ' inplace="1"' "$xml" && grep -q ' outofplace="1"' "$xml"; then
  modes="both call modes: the table's out-of-place and in-place columns are both filled"
elif grep -q ' inplace="1"' "$xml"; then
  modes="in-place calls only, so the out-of-place columns read N/A (weftc compile --out-of-place makes the other)"
else
  modes="out-of-place calls only, so the in-place columns read N/A (weftc compile --in-place makes the other)"
fi
echo "   The XML is for $modes."
if [ "$gpu" = yes ] && [ -f "$build/runtime/gpu/cuda/libweft_gpu.a" ]; then
  stage "6/6" "weft-perf: $ranks ranks emulated on one GPU, results checked"
  "$perf" --ranks "$ranks" --xml "$xml" -b 1K -e 64M -f 4 -c 1
else
  stage "6/6" "weft-perf --device host: the interpreter kernel on CPU threads, results checked (timings not meaningful)"
  "$perf" --device host --ranks "$ranks" --xml "$xml" -b 1K -e 256K -f 16 -n 2 -w 1 -c 1
fi
printf '\n== done in %ds. Next: scripts/test.sh builds and runs every test; README.md says more.\n' \
  $((SECONDS - start))
