#!/usr/bin/env bash
# GPU check of the NCCL shim (docs/nccl.md), run on a machine with at least one GPU; called by
# scripts/gpu-check.sh. Usage: scripts/gpu-check-nccl.sh [BUILD_DIR]
#
#   1. the example application, one rank, real NCCL under LD_PRELOAD=libweft_nccl.so: out-of-place
#      calls run on Weft (one-rank copy algorithms), in-place ones fall back to NCCL, both logged;
#   2. standalone mode at 2, 4 and 8 processes on the one GPU, every collective on Weft;
#   3. all of it with a malformed XML in WEFT_ALGO_DIR, which must be reported and skipped;
#   4. standalone at 8 processes with only what `weftc synthesize -t h100-nvswitch` wrote for
#      allreduce, allgather and alltoall in WEFT_ALGO_DIR: every call on a synthesized
#      algorithm, the one its size band names (docs/synthesis.md).
# Every run checks its results. Logs go to $WEFT_GPU_CHECK_LOGS (default: a temporary folder,
# kept and printed on failure). Exit status: 0 when every check passed.
#
# WEFT_NCCL_CHECK_ALGO_DIR: a folder of other algorithms (e.g. the DSL library's XML) to load
# beside the generated ones. WEFT_NCCL_CHECK_QUICK=1: standalone at 2 and 4 processes only, and
# smaller sizes (gpu-check.sh --quick).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${WEFT_BUILD_DIR:-$root/build}}
shim=$build/plugin/src/libweft_nccl.so
example=$build/examples/nccl/weft-nccl-example
generator=$build/examples/nccl/weft-example-algorithms

weftc=$build/tools/weftc/weftc
if [[ ! -x $example || ! -f $shim || ! -x $generator || ! -x $weftc ]]; then
  cmake --build "$build" --target weft_nccl weft-nccl-example weft-example-algorithms weftc || exit 1
fi
logs=${WEFT_GPU_CHECK_LOGS:-$(mktemp -d -t weft-nccl-check-XXXXXX)}
mkdir -p "$logs"
algos=$logs/algorithms
rm -rf "$algos"
"$generator" "$algos" 1 2 4 8 > /dev/null || { echo "cannot generate algorithms"; exit 1; }
# Sorted first: it is read before every good file and must not stop them from loading.
printf '<algo name="broken" coll="allreduce" ngpus="2">\n  <gpu id=\n' > "$algos/00-malformed.xml"
algo_dirs=$algos
if [[ -n ${WEFT_NCCL_CHECK_ALGO_DIR:-} ]]; then algo_dirs=$algos:$WEFT_NCCL_CHECK_ALGO_DIR; fi

passed=0
failed=0
report() {  # name status detail
  if [[ $2 == PASS ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  printf '%-58s %s %s\n' "$1" "$2" "${3:-}"
}
# expect NAME LOG PATTERN...: every pattern (grep -E) must occur in LOG.
expect() {
  local name=$1 log=$2
  shift 2
  local pattern
  for pattern in "$@"; do
    if ! grep -Eq -- "$pattern" "$log"; then
      report "$name" FAIL "(missing in $log: $pattern)"
      return 1
    fi
  done
  return 0
}

# 1. One rank beside the real NCCL.
log=$logs/one-rank-nccl.log
WEFT_ALGO_DIR=$algo_dirs WEFT_DEBUG=INFO LD_PRELOAD=$shim \
  timeout 300 "$example" -n 1 -b 4K -e 256K -f 8 -i -t 280 > "$log" 2>&1
status=$?
name="1 rank, real NCCL, LD_PRELOAD shim"
if [[ $status -ne 0 ]]; then
  report "$name" FAIL "(exit $status, $log)"
elif expect "$name" "$log" \
    'WEFT INFO forwarding to' \
    "WEFT WARN skipping algorithm file '.*00-malformed.xml'" \
    "ncclAllReduce: .*out-of-place\) on 1 ranks -> Weft 'weft_example_copy_allreduce_1'" \
    "ncclAllReduce: .*in-place\) on 1 ranks -> NCCL: " \
    "ncclAllGather: .* -> Weft 'weft_example_copy_allgather_1'" \
    "ncclAlltoAll: .* -> Weft 'weft_example_copy_alltoall_1'" \
    '# all 1 ranks passed'; then
  report "$name" PASS
fi

# 2. Standalone, several processes on one GPU.
process_counts="2 4 8"
largest=512K
if [[ ${WEFT_NCCL_CHECK_QUICK:-0} == 1 ]]; then
  process_counts="2 4"
  largest=64K
fi
# standalone NAME N ALGO_DIRS LARGEST LOG PATTERN...: the example at N processes in standalone
# mode, every call on Weft (none fallen back), every PATTERN in its log.
standalone() {
  local name=$1 n=$2 dirs=$3 largest=$4 log=$5
  shift 5
  WEFT_STANDALONE=1 WEFT_ALGO_DIR=$dirs WEFT_DEBUG=INFO WEFT_TIMEOUT_S=${WEFT_TIMEOUT_S:-60} \
    LD_PRELOAD=$shim timeout 300 "$example" -n "$n" -b 8K -e "$largest" -f 8 -w 1 -t 280 > "$log" 2>&1
  local status=$?
  if [[ $status -ne 0 ]]; then
    report "$name" FAIL "(exit $status, $log)"
  elif grep -q -- '-> NCCL' "$log"; then
    report "$name" FAIL "(a call fell back in standalone mode, $log)"
  elif expect "$name" "$log" "$@" "# all $n ranks passed"; then
    report "$name" PASS
  fi
}
for n in $process_counts; do
  standalone "standalone, $n processes" "$n" "$algo_dirs" "$largest" "$logs/standalone-$n.log" \
    'standalone mode \(WEFT_STANDALONE=1\)' \
    "WEFT WARN skipping algorithm file '.*00-malformed.xml'" \
    "ncclAllReduce: .* on $n ranks -> Weft 'weft_example_ring_allreduce_$n'" \
    "ncclAllGather: .* on $n ranks -> Weft 'weft_example_ring_allgather_$n'" \
    "ncclAlltoAll: .* on $n ranks -> Weft 'weft_example_direct_alltoall_$n'"
done

# 4. Standalone at 8 processes on synthesized algorithms only.
synth_dirs=""
name="standalone, 8 processes, synthesized algorithms"
colls="allreduce allgather alltoall"
if ! "$weftc" synthesize --help > /dev/null 2>&1; then
  report "$name" FAIL "(weftc has no synthesize command: LEMON, liblemon-dev, was not found)"
  colls=""
fi
for coll in $colls; do
  folder=$logs/synth/$coll
  if ! "$weftc" synthesize -t h100-nvswitch -c "$coll" -b 1K -e 64M --no-nccl --force \
      -o "$folder" \
      > "$logs/synth-$coll.log" 2>&1; then
    report "$name" FAIL "(weftc synthesize -c $coll failed, $logs/synth-$coll.log)"
    synth_dirs=""
    break
  fi
  synth_dirs=${synth_dirs:+$synth_dirs:}$folder
done
if [[ -n $synth_dirs ]]; then
  standalone "$name" 8 "$synth_dirs" 8M "$logs/standalone-8-synthesized.log" \
    "ncclAllReduce: .* on 8 ranks -> Weft 'synth_" \
    "ncclAllGather: .* on 8 ranks -> Weft 'synth_" \
    "ncclAlltoAll: .* on 8 ranks -> Weft 'synth_"
fi

echo "nccl shim GPU check: $passed passed, $failed failed (logs in $logs)"
[[ $failed -eq 0 ]]
