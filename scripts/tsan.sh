#!/usr/bin/env bash
# Host mode under ThreadSanitizer: builds the CPU parts with -fsanitize=thread (build-tsan/, CUDA
# off) and runs a subset of the kernel-host tests, whose kernel threads synchronise only through
# primitives.cuh's host twin (std::atomic_ref with the PTX's orders) and the CTA and warp
# barriers. A data race between kernel threads, or between the host and the kernel, is a report,
# and any report fails the run.
#
#   scripts/tsan.sh [CATCH_TEST_SPEC]   (default: the subset below)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
build=${WEFT_BUILD_DIR:-$root/build-tsan}
cmake -S "$root" -B "$build" -G Ninja -DWEFT_ENABLE_CUDA=OFF -DWEFT_TSAN=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR="${WEFT_WERROR:-ON}"
cmake --build "$build" -j "${WEFT_JOBS:-$(nproc 2>/dev/null || echo 2)}" --target weft_kernel_host_tests
# Every protocol's handshakes (Simple counters, LL lines, LL128 lines), dependency flags, the
# error record, the abort word and the arrival tables, split steps, replays, counters across the
# LL flag wrap: small shapes, so that it stays minutes.
subset=${1:-"launches:*,review:*,failures: a deadlocking*,failures: a dependency*,library: allreduce_ring,library: reducescatter_allpairs,library: broadcast_binomial_tree"}
export TSAN_OPTIONS="halt_on_error=1 abort_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# The overlap step runs two warps' threads per CTA in host mode, and ThreadSanitizer maps memory
# for every thread: past the kernel's default of 65,530 mappings it fails with "can not mmap" or
# "failed to allocate ... (error code: 12)", which is no race and would hide one. Say so first.
maps=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)
if [ "$maps" -lt 262144 ]; then
  echo "tsan: vm.max_map_count is $maps; the overlap step's threads need 262144 under" \
       "ThreadSanitizer: sysctl -w vm.max_map_count=262144 (as root), then run again" >&2
  exit 2
fi
# Once per step variant (WEFT_STEP, weft/program/options.h): each has its own barriers to prove; the
# overlap step (named barriers, a poster warp) once more with Simple's messages in 4 slices.
for variant in lean full overlap overlap:4; do
  step=${variant%%:*} slices=1
  [[ $variant == *:* ]] && slices=${variant#*:}
  echo "tsan: the $step step, $slices slice(s)"
  WEFT_STEP=$step WEFT_SIMPLE_SLICES=$slices "$build/tests/kernel_host/weft_kernel_host_tests" \
    "$subset" --warn NoTests
done
echo "tsan: no report"
