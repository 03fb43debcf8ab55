#!/usr/bin/env bash
# Compile-time benchmark of the DSL compiler against the Python reference compiler's figures
# (../shared/msccl-xml/README.md, measured on a 2-core machine). For each case: compile (trace
# through emit) wall time, CPU time and the process's peak memory after compiling; then the
# verification on the CPU reference executor (`weftc compile`'s proof, one seed) with its own
# time and peak memory.
# Compile times are the fastest of 5 runs (1 for the 1024-rank case): on a shared machine a run
# of milliseconds is easily stretched by being descheduled; CPU time shows the same.
#
#   scripts/bench-compile.sh [--no-verify-large]
#
# --no-verify-large skips verifying the 1024-rank alltoall (it takes minutes and gigabytes);
# its compile time is still measured. Builds weft_compile_bench in $WEFT_BUILD_DIR (default
# ./build) when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
verify_large=1
for arg in "$@"; do
  case "$arg" in
    --no-verify-large) verify_large=0 ;;
    *) echo "usage: $0 [--no-verify-large]" >&2; exit 2 ;;
  esac
done
bench=$build/tools/compile-bench/weft_compile_bench
if [[ ! -x $bench ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DWEFT_ENABLE_CUDA="${WEFT_ENABLE_CUDA:-OFF}" >/dev/null
  cmake --build "$build" --target weft_compile_bench -j "${WEFT_JOBS:-2}"
fi

# name | arguments | Python reference: seconds | MB ("-" where it has none)
cases=(
  "ring allreduce 64|allreduce_ring --ranks 64 --channels 8|0.60|84"
  "ring allreduce 128|allreduce_ring --ranks 128 --channels 8|3.80|267"
  "ring allreduce 256|allreduce_ring --ranks 256 --channels 8|21.6|1000"
  "all-pairs allreduce 16|allreduce_allpairs --ranks 16|0.44|79"
  "all-pairs allreduce 32|allreduce_allpairs --ranks 32|5.46|490"
  "two-step alltoall 8x8|alltoall_two_step --nodes 8 --gpus-per-node 8|0.64|89"
  "two-step alltoall 16x8|alltoall_two_step --nodes 16 --gpus-per-node 8|2.46|292"
  "two-step alltoall 32x8|alltoall_two_step --nodes 32 --gpus-per-node 8|14.0|1110"
  "hierarchical allreduce 8x8|allreduce_hierarchical --nodes 8 --gpus-per-node 8|0.68|90"
  "hierarchical allreduce 8x16|allreduce_hierarchical --nodes 8 --gpus-per-node 16|-|-"
  "two-step alltoall 128x8|alltoall_two_step --nodes 128 --gpus-per-node 8|-|-"
)

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b + 0 == 0) print "-"; else printf "%.0fx", a / b }'; }

printf '%-28s %8s %6s %4s | %9s %9s %8s | %8s %6s | %9s %8s | %s\n' \
  case steps tbs ch "compile s" "cpu s" "peak MB" "python" "x" "verify s" "peak MB" result
failed=0
for entry in "${cases[@]}"; do
  IFS='|' read -r label args py_s py_mb <<<"$entry"
  extra="--repeat 5"
  if [[ $label == *128x8* ]]; then
    extra="--repeat 1"
    if [[ $verify_large == 0 ]]; then extra="$extra --no-verify"; fi
  fi
  # shellcheck disable=SC2086
  if ! line=$("$bench" $args $extra 2>&1); then
    failed=1
  fi
  compile_s=$(field compile_s "$line")
  cpu_s=$(field compile_cpu_s "$line")
  mb=$(field compile_peak_mb "$line")
  printf '%-28s %8s %6s %4s | %9s %9s %8s | %8s %6s | %9s %8s | %s\n' "$label" \
    "$(field steps "$line")" "$(field threadblocks "$line")" "$(field channels "$line")" \
    "$compile_s" "$cpu_s" "$mb" "$py_s" "$(ratio "$py_s" "$compile_s")" \
    "$(field verify_s "$line")" "$(field verify_peak_mb "$line")" "$(field verify "$line")"
  if [[ $py_mb != "-" ]]; then
    printf '%-28s %58s %s MB vs %s MB: %s less memory\n' "" "" "$mb" "$py_mb" "$(ratio "$py_mb" "$mb")"
  fi
done
echo "compile: trace + passes through emit (validation included); peak MB: the whole process"
echo "after compiling; verify: the CPU reference executor, S=37, tiles 8 and 64, FIFO depths 2 and 8,"
echo "one seed. Machine load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
exit $failed
