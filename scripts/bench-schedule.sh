#!/usr/bin/env bash
# Schedule quality against msccl-tools, judged by predicted time (weftc simulate on the
# a100-nvswitch preset: nodes × GPUs shapes run on that many machines joined by their NICs, other
# shapes on one machine of `ranks` GPUs, nodes = ranks / 8 above 8) at 64 KB, 1 MB, 4 MB, 64 MB
# and 256 MB. Fewer steps or threadblocks do not make a schedule faster; time does.
#
# 1. The library: for each algorithm × shape × instances × protocol, what `weftc compile` made
#    (proved, as always): steps, threadblocks, channels, critical path (in steps), fused steps,
#    compile + proof seconds, and the five predicted times. Where
#    ../shared/msccl-xml/msccl-tools-generated/ holds msccl-tools' file for the same shape, a row
#    "msccl-tools" follows, and a verdict: no slower at every size, or SLOWER at which.
# 2. MSCCLang programs (with WEFT_MSCCL_TOOLS_DIR, a checkout of Azure/msccl-tools whose Python
#    can import msccl.language; MSCCL_TOOLS_PYTHONPATH overrides the path it is imported from):
#    each program run by msccl-tools and unchanged through `python3 -m weft.mscclang`, and the
#    library's equivalent where it has one, both predicted beside msccl-tools' XML.
#
#   scripts/bench-schedule.sh [--quick] [--protocols "Simple LL LL128"] [--instances "1 2 4"]
#
# --quick: Simple only, instances 1 and 2 (plus the msccl-tools files' own protocol and
# instances). Needs weftc and the Python module in $WEFT_BUILD_DIR (default ./build; WEFTC
# overrides the binary); the third-party folder is looked for beside the checkout
# (WEFT_MSCCL_XML_DIR overrides) and its rows are skipped, with a note, when it is absent.
# Exit status 1 when a comparison is slower at some size or a compile fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
# Absolute: the MSCCLang programs run from their own folder, with the Python module on the path.
[[ -d $build ]] && build=$(cd "$build" && pwd)
weftc=${WEFTC:-$build/tools/weftc/weftc}
[[ -x $weftc && $weftc != /* ]] && weftc=$PWD/$weftc
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
  "allreduce_allpairs|--ranks 8 --chunks 1|||"
  "allreduce_recursive_halving_doubling|--ranks 8|allreduce_rec_doubling_halving_8r_LL.xml|1|LL"
  "allreduce_double_binary_tree|--ranks 8|||"
  "allreduce_hierarchical|--nodes 2 --gpus-per-node 4|hierarchical_allreduce_4g2n.xml|1|Simple"
  "allreduce_hierarchical|--nodes 2 --gpus-per-node 4 --channels 8|||"
  "allreduce_hierarchical|--nodes 2 --gpus-per-node 8|||"
  "allgather_ring|--ranks 8|||"
  "allgather_direct|--ranks 8|allgather_allpairs_8r_i1_LL128.xml|1|LL128"
  "allgather_recursive_doubling|--ranks 8|allgather_recursive_doubling_8r.xml|1|Simple"
  "reducescatter_ring|--ranks 8|||"
  "reducescatter_allpairs|--ranks 8|reducescatter_allpairs_8r_LL.xml|1|LL"
  "reducescatter_allpairs|--ranks 8 --chunks 1|||"
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

sizes_label=(64K 1M 4M 64M 256M)
sizes_bytes=(65536 1048576 4194304 67108864 268435456)

# The machine a shape runs on: nodes × GPUs copies of a100-nvswitch, else one node.
machine() {
  local nodes gpus
  nodes=$(sed -n 's/.*--nodes \([0-9]*\).*/\1/p' <<<"$1")
  gpus=$(sed -n 's/.*--gpus-per-node \([0-9]*\).*/\1/p' <<<"$1")
  if [[ -n $nodes ]]; then echo "--nodes $nodes --gpus-per-node $gpus"; fi
}

# The machine for a file's ranks: one node of that many GPUs up to 8, else ranks / 8 nodes of 8.
machine_for_ranks() {
  local ranks=$1
  if ((ranks > 8)); then
    echo "--nodes $(((ranks + 7) / 8)) --gpus-per-node 8"
  else
    echo "--gpus-per-node $ranks"
  fi
}

# Predicted microseconds of FILE on MACHINE at the five sizes ("-" where the simulator refuses).
predict() {
  local file=$1 machine=$2 in_place=() out
  if grep -q 'inplace="1" outofplace="0"' "$file"; then in_place=(--in-place); fi
  # shellcheck disable=SC2086
  if out=$("$weftc" simulate "$file" -t a100-nvswitch $machine -b 64K -e 256M -f 4 \
      "${in_place[@]}" 2>/dev/null); then
    awk -v want="${sizes_bytes[*]}" 'BEGIN { n = split(want, w, " ") }
         { t[$1] = $5 } END { for (i = 1; i <= n; ++i) printf "%s ", (w[i] in t ? t[w[i]] : "-") }' \
      <<<"$out"
  else
    echo "- - - - -"
  fi
}

row_format='%-62s %-11s %6s %5s %4s %4s %6s %9s %9s %9s %9s %10s %10s\n'
# Prints one row; sets row_times for the verdict.
row() {
  local label=$1 by=$2 file=$3 fused=$4 seconds=$5 machine=$6 info
  info=$("$weftc" info "$file")
  read -r -a row_times <<<"$(predict "$file" "$machine")"
  # shellcheck disable=SC2059
  printf "$row_format" "$label" "$by" "$(field steps "$info")" "$(field threadblocks "$info")" \
    "$(field channels "$info")" "$(field "critical path" "$info")" "$fused" "$seconds" \
    "${row_times[@]}"
}

compared=0
slower_count=0
failed=0
# Compares ours_times with row_times (msccl-tools'), to the hundredth of a microsecond.
verdict() {
  local slower="" k
  for k in 0 1 2 3 4; do
    if [[ ${ours_times[k]} == - || ${row_times[k]} == - ]]; then
      slower+=" ${sizes_label[k]} (no prediction)"
    elif awk -v a="${ours_times[k]}" -v b="${row_times[k]}" \
        'BEGIN { exit !(sprintf("%.2f", a) + 0 > sprintf("%.2f", b) + 0) }'; then
      slower+=" ${sizes_label[k]} ($(awk -v a="${ours_times[k]}" -v b="${row_times[k]}" \
        'BEGIN { printf "%.2fx", a / b }'))"
    fi
  done
  compared=$((compared + 1))
  if [[ -z $slower ]]; then
    printf '  => Weft no slower at every size\n'
  else
    slower_count=$((slower_count + 1))
    printf '  => Weft SLOWER at%s\n' "$slower"
  fi
}

compile_row() {  # label machine weftc-compile-arguments...
  local label=$1 mach=$2 out xml=$work/out.xml fused seconds
  shift 2
  if ! out=$("$weftc" compile "$@" --seeds 1 -o "$xml" 2>&1); then
    printf '%-62s %-11s FAILED: %s\n' "$label" weft "$(grep -m1 error <<<"$out")"
    failed=1
    return 1
  fi
  fused=$(sed -n 's/.*fused: \([0-9]*\) rcs, \([0-9]*\) rrcs, \([0-9]*\) rrs.*/\1 \2 \3/p' \
    <<<"$out" | awk '{ print $1 + $2 + $3 }')
  seconds=$(awk '/compiled in/ { for (i = 1; i <= NF; ++i) if ($i == "in") c = $(i + 1) }
                 /verified in/ { for (i = 1; i <= NF; ++i) if ($i == "in") v = $(i + 1) }
                 END { printf "%.3f", c + v }' <<<"$out")
  row "$label" weft "$xml" "${fused:-0}" "$seconds" "$mach"
}

echo "# 1. The library against msccl-tools' files"
# shellcheck disable=SC2059
printf "$row_format" "algorithm shape / instances protocol" by steps tbs ch path fused \
  "compile s" "64K us" "1M us" "4M us" "64M us" "256M us"
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
      place=()
      if [[ $have_file == 1 ]] && grep -q 'inplace="1" outofplace="0"' "$msccl_dir/$mfile"; then
        place=(--in-place)
      fi
      # shellcheck disable=SC2086
      compile_row "$name $shape / i$inst $proto" "$mach" "$name" $shape --instances "$inst" \
        --proto "$proto" "${place[@]}" || continue
      if [[ $have_file == 1 && $inst == "$minst" && $proto == "$mproto" ]]; then
        ours_times=("${row_times[@]}")
        theirs=$msccl_dir/$mfile
        tfused=$(grep -cE 'type="(rcs|rrcs|rrs)"' "$theirs" || true)
        row "  $mfile" msccl-tools "$theirs" "$tfused" "-" "$mach"
        verdict
      fi
    done
  done
done

# MSCCLang programs: program and arguments | the library's equivalent (weftc compile arguments).
programs=(
  "allreduce_a100_allpairs.py 8 1|allreduce_allpairs --ranks 8 --proto LL --in-place"
  "allreduce_a100_allpairs.py 8 2|allreduce_allpairs --ranks 8 --proto LL --instances 2 --in-place"
  "reducescatter_allpairs.py 8|reducescatter_allpairs --ranks 8 --proto LL --in-place"
  "allreduce_1step.py 8 1|"
  "allreduce_a100_multinode_allpairs.py 8 1|"
  "hierarchical_allreduce.py 8 2 1|allreduce_hierarchical --nodes 2 --gpus-per-node 8 --in-place"
  "alltoall_a100_three_step.py 2 4 2|"
  "allreduce_a100_ring.py 8 4 1|"
  "allreduce_a100_ring.py 8 4 2 --protocol Simple|"
  "allgather_allpairs.py 8 1|"
  "allreduce_recursive_doubling_halving.py 8 1|"
  "allreduce_a100_ncv4_v2.py 4 1|"
  "simple/allreduce_ring.py 4 1|"
)
echo
echo "# 2. MSCCLang programs: msccl-tools' output, Weft's (the same program), the library's"
if [[ -z ${WEFT_MSCCL_TOOLS_DIR:-} || ! -d ${WEFT_MSCCL_TOOLS_DIR:-}/examples/mscclang ]]; then
  echo "# note: WEFT_MSCCL_TOOLS_DIR does not name a msccl-tools checkout: section skipped"
else
  examples=$WEFT_MSCCL_TOOLS_DIR/examples/mscclang
  tools_path=${MSCCL_TOOLS_PYTHONPATH:-$WEFT_MSCCL_TOOLS_DIR}
  # shellcheck disable=SC2059
  printf "$row_format" "program arguments" by steps tbs ch path fused "compile s" "64K us" \
    "1M us" "4M us" "64M us" "256M us"
  for entry in "${programs[@]}"; do
    IFS='|' read -r program library <<<"$entry"
    read -r -a argv <<<"$program"
    theirs=$work/theirs.xml
    if ! (cd "$examples" && PYTHONPATH=$tools_path python3 "${argv[@]}") >"$theirs" 2>"$work/err"; then
      printf '%-62s %-11s FAILED: %s\n' "$program" msccl-tools "$(tail -1 "$work/err")"
      failed=1
      continue
    fi
    ranks=$("$weftc" info "$theirs" | awk '/^  ranks/ { print $2 }')
    mach=$(machine_for_ranks "$ranks")
    tfused=$(grep -cE 'type="(rcs|rrcs|rrs)"' "$theirs" || true)
    row "$program" msccl-tools "$theirs" "$tfused" "-" "$mach"
    reference=("${row_times[@]}")
    ours=$work/ours.xml
    start=$(date +%s.%N)
    if ! (cd "$examples" && PYTHONPATH=$build/python python3 -m weft.mscclang --seeds 1 \
        "${argv[@]}") >"$ours" 2>"$work/err"; then
      printf '%-62s %-11s FAILED: %s\n' "  $program" weft "$(tail -1 "$work/err")"
      failed=1
      continue
    fi
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    ofused=$(grep -cE 'type="(rcs|rrcs|rrs)"' "$ours" || true)
    row "  $program" weft "$ours" "$ofused" "$seconds" "$mach"
    ours_times=("${row_times[@]}")
    row_times=("${reference[@]}")
    verdict
    if [[ -n $library ]]; then
      # shellcheck disable=SC2086
      if compile_row "  weftc compile $library" "$mach" $library; then
        ours_times=("${row_times[@]}")
        row_times=("${reference[@]}")
        verdict
      fi
    fi
  done
fi
echo
echo "steps and path (critical path, in steps) from weftc info; fused: rcs + rrcs + rrs steps;"
echo "compile s: weftc compile's compile + proof (one seed per case; for a program, the whole"
echo "python3 -m weft.mscclang run); times: weftc simulate on a100-nvswitch, predicted, not"
echo "measured. $compared comparisons, $((compared - slower_count)) no slower at every size."
echo "Machine load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
if ((failed || slower_count)); then exit 1; fi
exit 0
