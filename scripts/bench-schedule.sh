#!/usr/bin/env bash
# Schedule quality of the library against msccl-tools: for each library algorithm × shape ×
# instances × protocol, what `weftc compile` made (proved, as always) and what `weftc info` and
# `weftc simulate` say of it: steps, threadblocks, channels, critical path (in steps), fused steps,
# compile + proof seconds, and predicted time at 64 KB, 1 MB and 256 MB on the a100-nvswitch preset
# (nodes × GPUs shapes: that many copies of the machine, joined by their NICs). Where
# ../shared/msccl-xml/msccl-tools-generated/ holds msccl-tools' file for the same shape, instances
# and protocol, a row "msccl-tools" follows with the same columns for that file (no compile time),
# and a line says whether Weft's critical path and steps are no larger, or what was traded.
#
#   scripts/bench-schedule.sh [--quick] [--protocols "Simple LL LL128"] [--instances "1 2 4"]
#
# --quick: Simple only, instances 1 and 2 (plus the msccl-tools files' own protocol and
# instances). Needs weftc in $WEFT_BUILD_DIR (default ./build; WEFTC overrides the binary); the
# third-party folder is looked for beside the checkout (WEFT_MSCCL_XML_DIR overrides) and its rows
# are skipped, with a note, when it is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
weftc=${WEFTC:-$build/compiler/weftc}
msccl_dir=${WEFT_MSCCL_XML_DIR:-$root/../shared/msccl-xml}/msccl-tools-generated
protocols="Simple LL LL128"
instance_counts="1 2 4"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) protocols="Simple"; instance_counts="1 2"; shift ;;
    --protocols) protocols=$2; shift 2 ;;
    --instances) instance_counts=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--protocols \"Simple LL LL128\"] [--instances \"1 2 4\"]" >&2; exit 2 ;;
  esac
done
if [[ ! -x $weftc ]]; then
  echo "bench-schedule: $weftc is missing; build weftc first (scripts/build.sh)" >&2
  exit 2
fi
have_msccl=1
if [[ ! -d $msccl_dir ]]; then
  have_msccl=0
  echo "# note: $msccl_dir is absent: msccl-tools rows skipped"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# algorithm | shape arguments | msccl-tools file | its instances | its protocol
cases=(
  "allreduce_ring|--ranks 8|allreduce_ring_8r_1ch_Simple.xml|1|Simple"
  "allreduce_ring|--ranks 8 --channels 4|allreduce_ring_8r_4ch_LL128_i2.xml|2|LL128"
  "allreduce_allpairs|--ranks 8|allreduce_allpairs_8r_LL_i1.xml|1|LL"
  "allreduce_allpairs|--ranks 8 --chunks 4|allreduce_allpairs_8r_LL_i1.xml|1|LL"
  "allreduce_recursive_halving_doubling|--ranks 8|allreduce_rec_doubling_halving_8r_LL.xml|1|LL"
  "allreduce_double_binary_tree|--ranks 8|||"
  "allreduce_hierarchical|--nodes 2 --gpus-per-node 4|hierarchical_allreduce_4g2n.xml|1|Simple"
  "allreduce_hierarchical|--nodes 2 --gpus-per-node 4 --channels 16|hierarchical_allreduce_4g2n.xml|1|Simple"
  "allreduce_hierarchical|--nodes 2 --gpus-per-node 8|||"
  "allgather_ring|--ranks 8|||"
  "allgather_direct|--ranks 8|allgather_allpairs_8r_i1_LL128.xml|1|LL128"
  "allgather_recursive_doubling|--ranks 8|allgather_recursive_doubling_8r.xml|1|Simple"
  "reducescatter_ring|--ranks 8|||"
  "reducescatter_allpairs|--ranks 8|reducescatter_allpairs_8r_LL.xml|1|LL"
  "reducescatter_allpairs|--ranks 8 --chunks 4|reducescatter_allpairs_8r_LL.xml|1|LL"
  "alltoall_direct|--ranks 8|alltoall_allpairs_8r.xml|1|Simple"
  "alltoall_two_step|--nodes 2 --gpus-per-node 4|alltoall_two_step_2n4g.xml|1|Simple"
  "alltoall_two_step|--nodes 4 --gpus-per-node 8|||"
  "broadcast_chain|--ranks 8|||"
  "broadcast_binomial_tree|--ranks 8|||"
  "reduce_chain|--ranks 8|||"
  "reduce_binomial_tree|--ranks 8|||"
  "all_to_next|--ranks 8|||"
)

field() { sed -n "s/^ *$1 *\([0-9]*\).*/\1/p" <<<"$2" | head -1; }

# The machine the shape runs on: nodes × GPUs copies of a100-nvswitch, else one node.
machine() {
  local nodes gpus
  nodes=$(sed -n 's/.*--nodes \([0-9]*\).*/\1/p' <<<"$1")
  gpus=$(sed -n 's/.*--gpus-per-node \([0-9]*\).*/\1/p' <<<"$1")
  if [[ -n $nodes ]]; then echo "--nodes $nodes --gpus-per-node $gpus"; fi
}

# Predicted microseconds at 64K, 1M and 256M of FILE on MACHINE ("-" where the simulator refuses).
predict() {
  local file=$1 machine=$2 in_place=() out
  if grep -q 'inplace="1" outofplace="0"' "$file"; then in_place=(--in-place); fi
  # shellcheck disable=SC2086
  if out=$("$weftc" simulate "$file" -t a100-nvswitch $machine -b 64K -e 256M -f 16 \
      "${in_place[@]}" 2>/dev/null); then
    awk '$1 == 65536 { a = $5 } $1 == 1048576 { b = $5 } $1 == 268435456 { c = $5 }
         END { printf "%s %s %s", (a == "" ? "-" : a), (b == "" ? "-" : b), (c == "" ? "-" : c) }' \
      <<<"$out"
  else
    echo "- - -"
  fi
}

# Prints one row; sets row_steps, row_cp, row_tbs, row_ch for the comparison.
row() {
  local label=$1 by=$2 file=$3 fused=$4 seconds=$5 machine=$6 info
  info=$("$weftc" info "$file")
  row_steps=$(field steps "$info")
  row_tbs=$(field threadblocks "$info")
  row_ch=$(field channels "$info")
  row_cp=$(field "critical path" "$info")
  read -r t64 t1m t256m <<<"$(predict "$file" "$machine")"
  row_times=("$t64" "$t1m" "$t256m")
  printf '%-58s %-11s %6s %5s %4s %4s %6s %9s %9s %9s %10s\n' "$label" "$by" "$row_steps" \
    "$row_tbs" "$row_ch" "$row_cp" "$fused" "$seconds" "$t64" "$t1m" "$t256m"
}

printf '%-58s %-11s %6s %5s %4s %4s %6s %9s %9s %9s %10s\n' "algorithm shape / instances protocol" \
  by steps tbs ch path fused "compile s" "64K us" "1M us" "256M us"
failed=0
for entry in "${cases[@]}"; do
  IFS='|' read -r name shape mfile minst mproto <<<"$entry"
  have_file=0
  if [[ -n $mfile && $have_msccl == 1 && -f $msccl_dir/$mfile ]]; then have_file=1; fi
  if [[ -n $mfile && $have_msccl == 1 && ! -f $msccl_dir/$mfile ]]; then
    echo "# note: $msccl_dir/$mfile is absent: its row skipped"
  fi
  # This shape's instances and protocols, with the msccl-tools file's own among them.
  insts=$instance_counts
  protos=$protocols
  if [[ $have_file == 1 ]]; then
    [[ " $insts " == *" $minst "* ]] || insts="$insts $minst"
    [[ " $protos " == *" $mproto "* ]] || protos="$protos $mproto"
  fi
  mach=$(machine "$shape")
  for inst in $insts; do
    for proto in $protos; do
      label="$name $shape / i$inst $proto"
      xml=$work/out.xml
      # shellcheck disable=SC2086
      if ! out=$("$weftc" compile "$name" $shape --instances "$inst" --proto "$proto" --seeds 1 \
          -o "$xml" 2>&1); then
        printf '%-58s %-11s FAILED: %s\n' "$label" weft "$(grep -m1 error <<<"$out")"
        failed=1
        continue
      fi
      fused=$(sed -n 's/.*fused: \([0-9]*\) rcs, \([0-9]*\) rrcs, \([0-9]*\) rrs.*/\1 \2 \3/p' \
        <<<"$out" | awk '{ print $1 + $2 + $3 }')
      seconds=$(awk '/compiled in/ { for (i = 1; i <= NF; ++i) if ($i == "in") c = $(i + 1) }
                     /verified in/ { for (i = 1; i <= NF; ++i) if ($i == "in") v = $(i + 1) }
                     END { printf "%.3f", c + v }' <<<"$out")
      row "$label" weft "$xml" "${fused:-0}" "$seconds" "$mach"
      if [[ $have_file == 1 && $inst == "$minst" && $proto == "$mproto" ]]; then
        ours_steps=$row_steps ours_cp=$row_cp ours_tbs=$row_tbs ours_ch=$row_ch
        ours_times=("${row_times[@]}")
        theirs=$msccl_dir/$mfile
        tfused=$(grep -cE 'type="(rcs|rrcs|rrs)"' "$theirs" || true)
        row "  $mfile" msccl-tools "$theirs" "$tfused" "-" "$mach"
        if ((ours_steps <= row_steps && ours_cp <= row_cp)); then
          verdict="no larger: steps $ours_steps vs $row_steps, critical path $ours_cp vs $row_cp"
        else
          verdict="LARGER: steps $ours_steps vs $row_steps, critical path $ours_cp vs $row_cp;"
          verdict+=" traded for threadblocks $ours_tbs vs $row_tbs, channels $ours_ch vs $row_ch"
        fi
        slower=""
        sizes=(64K 1M 256M)
        for k in 0 1 2; do
          if [[ ${ours_times[k]} != - && ${row_times[k]} != - ]] &&
            awk -v a="${ours_times[k]}" -v b="${row_times[k]}" 'BEGIN { exit !(a > b * 1.01) }'; then
            slower+=" ${sizes[k]}"
          fi
        done
        if [[ -z $slower ]]; then verdict+="; predicted no slower"; else verdict+="; predicted SLOWER at$slower"; fi
        printf '  %s\n' "=> Weft $verdict"
      fi
    done
  done
done
echo "steps and path (critical path, in steps) from weftc info; fused: rcs + rrcs + rrs steps;"
echo "compile s: weftc compile's compile + proof (one seed per case); times: weftc simulate on"
echo "a100-nvswitch (nodes x GPUs shapes: that many machines), predicted, not measured."
echo "Machine load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
exit $failed
