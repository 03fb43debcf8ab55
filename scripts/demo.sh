#!/usr/bin/env bash
# Set-up and the main job: compile a library algorithm to MSCCL XML, prove it correct on the CPU
# reference executor, describe it, and run it through the interpreter kernel: on the GPU when one
# is present (8 ranks emulated on one device), else in host mode (the kernel's source on CPU
# threads, results checked, timings not meaningful). Usage: scripts/demo.sh [ALGORITHM] [RANKS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
algorithm=${1:-allreduce_ring}
ranks=${2:-8}

bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"

weftc=$build/compiler/weftc
out=$build/demo
mkdir -p "$out"
xml=$out/${algorithm}_${ranks}.xml

echo "== weftc compile $algorithm --ranks $ranks"
"$weftc" compile "$algorithm" --ranks "$ranks" -o "$xml"
echo "== weftc verify $xml"
"$weftc" verify "$xml"
echo "== weftc info $xml"
"$weftc" info "$xml"

perf=$build/runtime/src/gpu/weft-perf/weft-perf
if [ -f "$build/runtime/src/gpu/libweft_gpu.a" ] &&
   command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "== weft-perf: $ranks ranks emulated on one GPU"
  "$perf" --ranks "$ranks" --xml "$xml" -b 1K -e 64M -f 4 -c 1
else
  echo "== no GPU here (or CUDA was not built): weft-perf in host mode, the interpreter on CPU threads"
  "$perf" --device host --ranks "$ranks" --xml "$xml" -b 1K -e 256K -f 16 -n 2 -w 1 -c 1
fi
