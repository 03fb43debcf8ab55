#!/usr/bin/env bash
# GPU check of the NCCL shim under PyTorch (docs/nccl.md, "PyTorch"), run on a machine with a GPU
# and python3 with torch (CUDA build, NCCL backend). Usage: scripts/gpu-check-torch.sh [BUILD_DIR]
#
#   1. one process, world size 1, torch.distributed (backend nccl) with the real NCCL under
#      LD_PRELOAD=libweft_nccl.so and WEFT_DEBUG=INFO: all_reduce, all_gather_into_tensor,
#      reduce_scatter_tensor, all_to_all_single and broadcast on float32, bfloat16 and int32,
#      1 KB to 64 MB; every result must equal the input (each is a copy at world size 1), the
#      same run with WEFT_DISABLE=1 must give the same checksums, and the log must show calls
#      served by Weft ("-> Weft" lines; the one-rank algorithms are out-of-place copies of
#      allreduce, allgather and alltoall, so in-place calls and the rest go to NCCL, logged);
#   2. four processes on the one GPU, WEFT_STANDALONE=1: the same collectives to 4 MB against
#      values computed on the CPU, a barrier, 50 steps of DistributedDataParallel whose losses
#      must match one process training on the whole batch, a reduce (no algorithm loaded) that
#      must fail as a Python exception with the shim's reason, an all_reduce on a new_group and
#      all_to_all_single (each right, or refused cleanly where PyTorch makes it of calls
#      standalone mode does not serve: ncclCommSplit, ncclSend; reported as EXPECTED REFUSAL),
#      and a clean exit; the logs must show every call on Weft.
# scripts/torch-check.py does the PyTorch side. Logs go to $WEFT_GPU_CHECK_LOGS (default: a
# temporary folder, kept). Exit status: 0 when every check passed, 77 when python3 has no torch,
# no CUDA device or no NCCL backend (nothing was run), 1 otherwise.
#
# WEFT_TORCH_CHECK_PYTHON: the interpreter (default python3). WEFT_TORCH_CHECK_MAX_BYTES: the
# largest standalone call (default 4M). The build targets it needs, built when missing:
# weft_nccl, weft-example-algorithms, weftc.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${WEFT_BUILD_DIR:-$root/build}}
python=${WEFT_TORCH_CHECK_PYTHON:-python3}
script=$root/scripts/torch-check.py
logs=${WEFT_GPU_CHECK_LOGS:-$(mktemp -d -t weft-torch-check-XXXXXX)}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
export PYTHONUNBUFFERED=1

# 0. Is there a torch with CUDA and NCCL? Asked first: without one nothing here can run.
if ! command -v "$python" > /dev/null; then
  echo "torch shim check: skipped: no $python on PATH"
  exit 77
fi
timeout 60 "$python" "$script" probe > "$logs/probe.log" 2>&1
status=$?
cat "$logs/probe.log"
if [[ $status -eq 77 ]]; then
  echo "torch shim check: skipped: $python has no usable torch (see above); nothing was run"
  exit 77
elif [[ $status -ne 0 ]]; then
  echo "torch shim check: $python $script probe failed (exit $status, $logs/probe.log)"
  exit 1
fi

shim=$build/plugin/src/libweft_nccl.so
generator=$build/examples/nccl/weft-example-algorithms
weftc=$build/tools/weftc/weftc
if [[ ! -f $shim || ! -x $generator || ! -x $weftc ]]; then
  cmake --build "$build" --target weft_nccl weft-example-algorithms weftc || exit 1
fi

passed=0
failed=0
report() {  # name status detail
  if [[ $2 == PASS ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  printf '%-66s %s %s\n' "$1" "$2" "${3:-}"
}
# relay LOG STATUS NAME: reports the "CHECK|name|PASS|detail" lines torch-check.py printed in
# LOG; a failure with none of them (a crash) is reported as NAME.
relay() {
  local log=$1 status=$2 name=$3 n=0 line check verdict detail
  while IFS= read -r line; do
    IFS='|' read -r _ check verdict detail <<< "$line"
    report "$check" "$verdict" "$detail"
    n=$((n + 1))
  done < <(grep -a '^CHECK|' "$log")
  if [[ $n -eq 0 || ($status -ne 0 && $(grep -ac '^CHECK|.*|FAIL|' "$log") -eq 0) ]]; then
    report "$name" FAIL "(exit $status, $log)"
  fi
}

# Algorithms: the example's for 1 and 4 ranks (one rank: out-of-place copies of allreduce,
# allgather and alltoall; four: ring allreduce and allgather, direct alltoall, all out-of-place),
# and from weftc's library what PyTorch calls in place or the example lacks. File names set the
# catalog order: for each collective the pipelined algorithm first, then one with a single chunk
# per loop that takes any count (a barrier's one float, DDP's small broadcasts of bucket indices).
algos=$logs/algorithms
rm -rf "$algos"
if ! "$generator" "$algos" 1 4 > "$logs/algorithms.log" 2>&1; then
  report "generate the algorithms" FAIL "($logs/algorithms.log)"
  echo "torch shim check: $passed passed, $failed failed (logs in $logs)"
  exit 1
fi
compiled=1
compile() {  # name weftc-compile-arguments...: writes torch-NAME.xml
  local file=$algos/torch-$1.xml
  shift
  if ! "$weftc" compile "$@" -o "$file" >> "$logs/algorithms.log" 2>&1; then
    report "weftc compile $*" FAIL "($logs/algorithms.log)"
    compiled=0
  fi
}
compile 10-allreduce_ring-4-inplace allreduce_ring --ranks 4 --in-place
compile 11-allreduce_ring-4-chunks1-inplace allreduce_ring --ranks 4 --chunks 1 --in-place
compile 20-reducescatter_ring-4 reducescatter_ring --ranks 4 --out-of-place
for r in 0 1 2 3; do
  compile "30-broadcast_chain-4-root$r-inplace" broadcast_chain --ranks 4 --root "$r" --in-place
done
compile 31-broadcast_chain-4-root0-chunks1-inplace broadcast_chain --ranks 4 --root 0 --chunks 1 \
  --in-place
if [[ $compiled -ne 1 ]]; then
  echo "torch shim check: $passed passed, $failed failed (logs in $logs)"
  exit 1
fi
echo "torch shim check: $(find "$algos" -name '*.xml' | wc -l) algorithm files in $algos"

# 1. One process, the real NCCL beside the shim; then the same with WEFT_DISABLE=1.
log=$logs/one-process-weft.log
WEFT_ALGO_DIR=$algos WEFT_DEBUG=INFO LD_PRELOAD=$shim \
  timeout 90 "$python" "$script" single --label Weft --out "$logs/one-process-weft.json" \
  > "$log" 2>&1
status=$?
relay "$log" $status "1 process, real NCCL + shim"
name="1 process: the shim's log shows calls served by Weft"
if ! grep -aq 'WEFT INFO forwarding to' "$log"; then
  report "$name" FAIL "(the shim did not start: no 'forwarding to' line in $log)"
else
  summary=""
  for api in ncclAllReduce ncclAllGather ncclReduceScatter ncclAlltoAll ncclBcast ncclBroadcast; do
    weft=$(grep -ac "WEFT INFO $api: .* -> Weft '" "$log")
    nccl=$(grep -ac "WEFT INFO $api: .* -> NCCL: " "$log")
    ((weft + nccl > 0)) && summary+="$api $weft Weft/$nccl NCCL; "
  done
  total=$(grep -ac -- "-> Weft '" "$log")
  allgather=$(grep -ac \
    "WEFT INFO ncclAllGather: .* on 1 ranks -> Weft 'weft_example_copy_allgather_1'" "$log")
  echo "torch shim check: 1 process: ${summary%; }"
  if ((total > 0 && allgather > 0)); then
    report "$name" PASS "($total '-> Weft' lines)"
  else
    report "$name" FAIL "($total '-> Weft' lines, $allgather of them allgather; $log)"
  fi
fi

log=$logs/one-process-disabled.log
WEFT_DISABLE=1 WEFT_ALGO_DIR=$algos WEFT_DEBUG=INFO LD_PRELOAD=$shim \
  timeout 90 "$python" "$script" single --label WEFT_DISABLE=1 \
  --out "$logs/one-process-disabled.json" > "$log" 2>&1
status=$?
relay "$log" $status "1 process, WEFT_DISABLE=1"
if grep -aq -- "-> Weft '" "$log" ||
    ! grep -aq 'WEFT_DISABLE=1: every NCCL call goes to' "$log"; then
  report "1 process, WEFT_DISABLE=1: nothing on Weft" FAIL "($log)"
fi

if [[ -f $logs/one-process-weft.json && -f $logs/one-process-disabled.json ]]; then
  log=$logs/one-process-compare.log
  timeout 60 "$python" "$script" compare "$logs/one-process-weft.json" \
    "$logs/one-process-disabled.json" > "$log" 2>&1
  relay "$log" $? "1 process: results with and without Weft"
else
  report "1 process: results with and without Weft" FAIL "(a run wrote no results)"
fi

# 2. Four processes on the one GPU, standalone mode; torch-check.py starts them with
# WEFT_STANDALONE=1 and LD_PRELOAD in their environment and reads their logs.
log=$logs/standalone-4.log
WEFT_TIMEOUT_S=${WEFT_TIMEOUT_S:-60} timeout 230 "$python" "$script" standalone --shim "$shim" \
  --algos "$algos" --logs "$logs/standalone-4" --nprocs 4 --steps 50 --timeout 170 \
  --max-bytes "${WEFT_TORCH_CHECK_MAX_BYTES:-4M}" > "$log" 2>&1
status=$?
grep -a '^torch-check: ' "$log"
relay "$log" $status "4 processes, standalone"

echo "torch shim check: $passed passed, $failed failed (logs in $logs)"
[[ $failed -eq 0 ]]
