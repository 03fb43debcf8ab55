#!/usr/bin/env bash
# The NCCL shim across hosts without a GPU: standalone mode in host mode (WEFT_STANDALONE=1,
# WEFT_DEVICE=host), an NCCL application on host memory with a process per rank (nccl_ranks.cpp),
# the ranks of each node on one host id. Every call must go to Weft (WEFT_DEBUG=INFO says where
# each went), every result must be right, and each communicator must say what carries it across
# hosts.
#
#   shim.sh WEFTC LIBWEFT_NCCL PROGRAM GPUS_PER_NODE
#
# 2 × 2: the four collectives synthesized for a100-nvswitch × 2 nodes, out of place and in place
# (every band winner; the shim picks one per call by size). 2 × 4: those winners take more
# threadblocks than host mode starts on two cores (tests/multihost/synthesized.sh), so each
# collective's one-piece sketch, and the library's hierarchical allreduce and two-step alltoall.
set -uo pipefail
weftc=$1 shim=$2 program=$3 gpus=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dirs=()
for c in allgather reducescatter allreduce alltoall; do
  for mode in out in; do
    # Standalone mode has no NCCL to hand a size to: NCCL's algorithms stay out of the bands
    # (with Weft's measured step, NCCL's model wins the smallest sizes on this machine).
    flags=(--no-nccl)
    [ "$mode" = in ] && flags+=(--in-place)
    [ "$gpus" != 2 ] && flags+=(--all)
    "$weftc" synthesize -t a100-nvswitch --nodes 2 --gpus-per-node "$gpus" -c "$c" "${flags[@]}" \
      -o "$work/$c-$mode" >"$work/synthesize.log" 2>&1 || { cat "$work/synthesize.log"; exit 1; }
    if [ "$gpus" = 2 ]; then
      dirs+=("$work/$c-$mode")
    else
      mkdir -p "$work/small"
      # The first sketch of one piece, LL: tens of threadblocks.
      sketch=$(ls "$work/$c-$mode/sketches/" | grep -E '_(p1|c1)_LL\.xml$' | head -1)
      [ -n "$sketch" ] || { echo "FAILED: no one-piece LL sketch for $c"; ls "$work/$c-$mode/sketches/"; exit 1; }
      cp "$work/$c-$mode/sketches/$sketch" "$work/small/$c-$mode-$sketch"
    fi
  done
done
if [ "$gpus" != 2 ]; then
  for name in allreduce_hierarchical alltoall_two_step; do
    "$weftc" compile "$name" --nodes 2 --gpus-per-node "$gpus" -o "$work/small/0-$name.xml" \
      >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
  done
  dirs=("$work/small")
fi
algo_dir=$(IFS=:; echo "${dirs[*]}")
nranks=$((2 * gpus))
WEFT_STANDALONE=1 WEFT_DEVICE=host WEFT_DEBUG=INFO WEFT_TIMEOUT_S=${WEFT_TIMEOUT_S:-120} \
  WEFT_ALGO_DIR="$algo_dir" LD_PRELOAD="$shim" \
  "$program" -n "$nranks" -p "$gpus" -i -b 1K -e 256K -f 16 >"$work/run.log" 2>&1
code=$?
status=0
grep -E "^rank [0-9]+:|ranks|failed|wrong" "$work/run.log" | grep -v "WEFT INFO" | sort -u | head -40
if ((code != 0)); then
  echo "FAILED: the application exited $code"
  grep -E "WEFT WARN|rank [0-9]+: .*(wrong|error|Error)" "$work/run.log" | head -20
  status=1
fi
to_weft=$(grep -c -- "-> Weft" "$work/run.log")
to_nccl=$(grep -c -- "-> NCCL" "$work/run.log")
across=$(grep -c "across hosts: the proxy, UCX" "$work/run.log")
echo "calls to Weft: $to_weft, to NCCL: $to_nccl; communicators across hosts: $across"
grep -m1 "across hosts: the proxy" "$work/run.log"
if ((to_weft == 0 || to_nccl != 0 || across != nranks)); then
  echo "FAILED: every call must go to Weft and every rank's communicator across hosts"
  grep -m5 -- "-> NCCL" "$work/run.log"
  status=1
fi
((status == 0)) && echo "every call went to Weft, across hosts, and every result is right"
exit "$status"
