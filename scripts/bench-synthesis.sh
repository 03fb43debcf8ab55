#!/usr/bin/env bash
# The synthesis suite (docs/synthesis.md): for every machine × allgather, reducescatter,
# allreduce and alltoall, `weftc synthesize` as a user runs it (one process, one core), and one
# table row: the bound at the links' achievable rates and at their line rates; the chosen
# algorithm at 64 MB and 1 GB as % of the bound, and its threadblocks per rank; NCCL's model as
# % of the bound; the chosen one's speed-up, at 64 MB and 1 GB, over NCCL's model and over NCCL's
# algorithms written as Weft algorithms on Weft's model (weft/synthesis/nccl_algorithms.h: its
# ring per channel, each crossing nodes on its own NIC, and its tree; up to 64 GPUs); on one node, the library's best
# (`--library`, each of its algorithms compiled and proved too) at 1 GB; the seconds synthesis took
# (bound, rings and paths, sketches compiled, the chosen ones proved), the seconds the whole
# command took (the predictions included) and its peak memory. Every row within synthesize's
# default threadblock budget (NCCL's channel ceiling for the GPUs); "gain with more threadblocks,
# 1 GB": where a sketch over it is predicted faster at 1 GB, its speed-up over the chosen and its
# threadblocks per rank, else "-". Predicted by Weft's simulator, not measured.
#
#   scripts/bench-synthesis.sh [--quick] [--only REGEX] [--no-header] [--large-bound-only] [WEFTC]
#                                                    (WEFTC default: build/tools/weftc/weftc)
#
# --quick runs the single-node machines only; --only those whose name matches REGEX (several
# runs side by side, one per core, each with --no-header after the first). The Azure topology files are read from
# ../shared/topologies; machines that need them are left out, said so, when they are absent.
# The 1,024-GPU rows take minutes each and up to 13 GB (glibc's heap in huge pages, which their
# compiles fault in); --large-bound-only computes only their bound (`synthesize --bound-only`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
only=""
header=1
large_bound_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --only) only=$2; shift 2 ;;
    --no-header) header=0; shift ;;
    --large-bound-only) large_bound_only=1; shift ;;
    *) break ;;
  esac
done
weftc=${1:-$root/build/tools/weftc/weftc}
[ -x "$weftc" ] || { echo "bench-synthesis: no weftc at $weftc (build it first)" >&2; exit 2; }
"$weftc" synthesize --help >/dev/null 2>&1 ||
  { echo "bench-synthesis: $weftc has no 'synthesize' (built without LEMON?)" >&2; exit 2; }
azure=$root/../shared/topologies
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name|arguments
machines=(
  "h100-nvswitch (8)|-t h100-nvswitch"
  "DGX-1 (azure-ndv2)|-t $azure/azure-ndv2-topo.xml"
  "DGX-1, NVLink 0-1 down|-t $azure/azure-ndv2-topo.xml --link 0-1=0"
  "DGX-1, 6 of 8 GPUs|-t $azure/azure-ndv2-topo.xml --gpus-per-node 6"
  "azure-ncv4 (4 A100 PCIe)|-t $azure/azure-ncv4-topo.xml"
  "pcie-gen4 (8)|-t pcie-gen4"
)
if [ $quick = 0 ]; then
  machines+=(
    "a100-nvswitch × 2|-t a100-nvswitch --nodes 2"
    "A100, 4 NICs + 1 on the root port × 2|-t $root/tests/data/topologies/a100-4nic-plus-root-dump.xml --nodes 2"
    "DGX-1 × 2|-t $azure/azure-ndv2-topo.xml --nodes 2"
    "a100-nvswitch × 4|-t a100-nvswitch --nodes 4"
    "h100-nvswitch × 4|-t h100-nvswitch --nodes 4"
    "a100-nvswitch × 8|-t a100-nvswitch --nodes 8"
    "h100-nvswitch × 128|-t h100-nvswitch --nodes 128"
  )
fi

# Prints the table cell for column $2 (1-based) of the row of size $3 in the printed table $1.
cell() { awk -v size="$3" -v col="$2" '$1 == size { print $col; exit }' "$1"; }

[ $header = 1 ] && echo "| machine | ranks | collective | bound algbw (GB/s) | at line rate | 64 MB | 1 GB | NCCL's model, 1 GB | vs NCCL's model, 64 MB | vs NCCL's model, 1 GB | vs NCCL's algorithms on Weft's model, 64 MB | vs NCCL's algorithms on Weft's model, 1 GB | library's best, 1 GB | threadblocks per rank, 64 MB / 1 GB | gain with more threadblocks, 1 GB | synthesis (s) | command (s) | peak memory (MB) |"
[ $header = 1 ] && echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for entry in "${machines[@]}"; do
  name=${entry%%|*}
  if [ -n "$only" ] && ! [[ "$name" =~ $only ]]; then continue; fi
  read -r -a args <<<"${entry#*|}"
  if [[ "${entry#*|}" == *"$azure"* ]] && [ ! -d "$azure" ]; then
    echo "| $name | | | left out: $azure is absent | | | | | | | | | | | | | | |"
    continue
  fi
  for collective in allgather reducescatter allreduce alltoall; do
    out=$work/out.txt
    thousand=0
    [[ "$name" == *"× 128"* ]] && thousand=1
    if [ $thousand = 1 ] && [ $large_bound_only = 1 ]; then
      /usr/bin/time -f "%e %M" -o "$work/time" "$weftc" synthesize "${args[@]}" -c "$collective" \
        --bound-only >"$out" 2>"$work/err" || true
      read -r seconds kb <"$work/time"
      bound=$(sed -n 's/^bound: .* at most \([0-9.]*\) GB\/s.*/\1/p' "$out")
      line=$(sed -n 's/.*at their line rates the bound is \([0-9.]*\) GB\/s.*/\1/p' "$out")
      ranks=$(sed -n 's/^bound: .* on \([0-9]*\) ranks.*/\1/p' "$out")
      echo "| $name | $ranks | $collective | $bound | $line | not run | not run | | | | | | | | | $seconds (bound) | $seconds | $((kb / 1024)) |"
      continue
    fi
    library=()
    [[ "$name" != *"×"* ]] && library=(--library)
    rm -rf "$work/dir"
    tunables=${GLIBC_TUNABLES:-}
    [ $thousand = 1 ] && tunables=glibc.malloc.hugetlb=1
    if ! GLIBC_TUNABLES=$tunables /usr/bin/time -f "%e %M" -o "$work/time" "$weftc" synthesize \
        "${args[@]}" -c "$collective" -b 64M -e 1G -f 16 "${library[@]}" -o "$work/dir" \
        >"$out" 2>"$work/err"; then
      echo "| $name | | $collective | failed: $(grep -v 'note:' "$work/err" | head -1) | | | | | | | | | | | | | | |"
      continue
    fi
    read -r seconds kb <"$work/time"
    bound=$(sed -n 's/^bound: .* at most \([0-9.]*\) GB\/s.*/\1/p' "$out")
    line=$(sed -n 's/.*at their line rates the bound is \([0-9.]*\) GB\/s.*/\1/p' "$out")
    ranks=$(sed -n 's/^bound: .* on \([0-9]*\) ranks.*/\1/p' "$out")
    # The table's rows: size bound(us) time(us) %bound NCCL(us) NCCL/W(us) ...; sizes as synthesize
    # prints them (rounded down to a multiple of the ranks: 65532K on 6 GPUs).
    small=$(awk 'NF >= 6 && $1 ~ /^[0-9]+[KMG]$/ { print $1; exit }' "$out")
    large=$(awk 'NF >= 6 && $1 ~ /^[0-9]+[KMG]$/ { s = $1 } END { print s }' "$out")
    pct64=$(cell "$out" 4 "$small")
    pct1g=$(cell "$out" 4 "$large")
    bound1g=$(cell "$out" 2 "$large")
    time1g=$(cell "$out" 3 "$large")
    nccl1g=$(cell "$out" 5 "$large")
    time64=$(cell "$out" 3 "$small")
    # The chosen file's threadblocks on its busiest rank (the table's tbs/rank), each size.
    tbs64=$(cell "$out" 7 "$small")
    tbs1g=$(cell "$out" 7 "$large")
    nccl64=$(cell "$out" 5 "$small")
    # NCCL's algorithms written as Weft algorithms, on Weft's model ("-" where not predicted).
    as_weft1g=$(cell "$out" 6 "$large")
    as_weft64=$(cell "$out" 6 "$small")
    vs_weft="-"
    vs_weft64="-"
    if [ -n "$as_weft1g" ] && [ "$as_weft1g" != "-" ]; then
      vs_weft=$(awk -v t="$time1g" -v n="$as_weft1g" 'BEGIN { printf "%.2f×", n / t }')
    fi
    if [ -n "$as_weft64" ] && [ "$as_weft64" != "-" ]; then
      vs_weft64=$(awk -v t="$time64" -v n="$as_weft64" 'BEGIN { printf "%.2f×", n / t }')
    fi
    nccl_pct="-"
    speedup="-"
    speedup64="-"
    if [ -n "$nccl1g" ] && [ "$nccl1g" != "-" ]; then
      nccl_pct=$(awk -v b="$bound1g" -v n="$nccl1g" 'BEGIN { printf "%.0f%%", 100 * b / n }')
      speedup=$(awk -v t="$time1g" -v n="$nccl1g" 'BEGIN { printf "%.2f×", n / t }')
    fi
    if [ -n "$nccl64" ] && [ "$nccl64" != "-" ]; then
      speedup64=$(awk -v t="$time64" -v n="$nccl64" 'BEGIN { printf "%.2f×", n / t }')
    fi
    lib="-"
    if [ ${#library[@]} -gt 0 ]; then
      # report.md: the best "others" time at the last size, as % of the bound.
      lib=$(awk -F'|' -v b="$bound1g" '/^\| [0-9]+[KMG] \|/ { o = $11 } END {
              gsub(/ /, "", o); if (o == "-" || o == "") print "-"; else printf "%.0f%%", 100 * b / o }' \
            "$work/dir/report.md")
    fi
    # report.md's section on the bound: the last size's "with more threadblocks" (its last column).
    gain=$(awk -F'|' '/^\| [0-9]+[KMG] \|/ { g = $(NF - 1) } END { gsub(/^ +| +$/, "", g); print (g == "" ? "-" : g) }' \
           "$work/dir/report.md")
    synth=$(sed -n 's/.*; bound \([0-9.]*\) s, compile \([0-9.]*\) s, predict [0-9.]* s, prove \([0-9.]*\) s.*/\1 \2 \3/p' "$out" |
            awk '{ printf "%.2f", $1 + $2 + $3 }')
    echo "| $name | $ranks | $collective | $bound | $line | $pct64 | $pct1g | $nccl_pct | $speedup64 | $speedup | $vs_weft64 | $vs_weft | $lib | $tbs64 / $tbs1g | $gain | $synth | $seconds | $((kb / 1024)) |"
  done
done
