#!/usr/bin/env bash
# The prediction's error table (docs/prediction.md, "Predicted against measured"): every figure
# the project can cite, measured on real hardware, beside what Weft's simulator predicts for the
# same algorithm on the same machine with the default cost parameters, and beside NCCL's own
# model (src/graph/tuning.cc, as weft/predict/nccl_model.h follows it) where NCCL ran it.
#
#   scripts/prediction-errors.sh [WEFTC]          (WEFTC default: build/tools/weftc/weftc)
#
# Two kinds of rows:
# - NVIDIA's and users' published nccl-tests figures (bus bandwidth at large sizes, NCCL's ring):
#   the prediction is NCCL's ring written as a Weft algorithm, one ring per channel;
# - Weft's own runs on a GPU (docs/performance/h100/, 8 ranks emulated on one H100): the
#   prediction is the same algorithm on the `emulated` preset.
# error = predicted / measured - 1, on bus bandwidth for the first kind, on time for the second.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
weftc=${1:-$root/build/tools/weftc/weftc}
[ -x "$weftc" ] || { echo "prediction-errors: no weftc at $weftc (build it first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A100 with 8 NVLinks (the A800): the a100-nvswitch preset with its NVLink line rate lowered.
"$weftc" topology -t a100-nvswitch --write-parameters "$work/a800.txt" >/dev/null
echo "link.nvlink.bandwidth_gbs = 200" >>"$work/a800.txt"

# Prints column $2 of the row of size $3 in weftc simulate's output $1.
column() { awk -v size="$3" -v col="$2" '$1 == size { print $col; exit }' "$1"; }
# 100 * (a / b - 1), signed, one decimal.
error() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f %%", 100 * (a / b - 1) }'; }

echo "| machine | what | size | measured | source | Weft's simulator | error | NCCL's model | error |"
echo "|---|---|---|---:|---|---:|---:|---:|---:|"
errors=()

# label|measured busbw (GB/s)|source|compile arguments|simulate arguments|busbw factor
published=(
  "8×H100 SXM|allgather, ring, 16 channels|370|NVIDIA/nccl-tests#212 (NVIDIA: NCCL's effective NVLink rate)|allgather_ring --ranks 8 --instances 16|-t h100-nvswitch|0.875"
  "8×H100 SXM|allreduce, ring, 16 channels|370|NVIDIA/nccl-tests#212 (NVIDIA: busbw with NCCL_ALGO=RING)|allreduce_ring --ranks 8 --instances 16|-t h100-nvswitch|1.75"
  "8×A100 SXM|allreduce, ring, 12 channels|232.5|NVIDIA/nccl-tests#175 (a user's DGX-class node)|allreduce_ring --ranks 8 --instances 12|-t a100-nvswitch|1.75"
  "8×A800 (8 NVLinks)|allreduce, ring, 8 channels|160|NVIDIA/nccl#412 (NVIDIA: what to expect)|allreduce_ring --ranks 8 --instances 8|-t a100-nvswitch --parameters $work/a800.txt|1.75"
)
size=1006632960 # 960 MB: 1 GB rounded down to a multiple of 16 rings x 8 ranks x 4-byte floats x 1 KB
for row in "${published[@]}"; do
  IFS='|' read -r machine what measured source compile simulate factor <<<"$row"
  read -r -a cargs <<<"$compile"
  read -r -a sargs <<<"$simulate"
  "$weftc" compile "${cargs[@]}" -o "$work/a.xml" >/dev/null
  "$weftc" simulate "$work/a.xml" "${sargs[@]}" -b $size -e $size --baseline nccl >"$work/out" 2>/dev/null
  busbw=$(column "$work/out" 7 $size)
  ring_us=$(column "$work/out" 8 $size)
  nccl=$(awk -v f="$factor" -v s=$size -v t="$ring_us" 'BEGIN { printf "%.1f", f * s / (t * 1e3) }')
  e1=$(error "$busbw" "$measured")
  e2=$(error "$nccl" "$measured")
  errors+=("${e1% %}")
  echo "| $machine | $what, busbw (GB/s) | 960 MB | $measured | $source | $busbw | $e1 | $nccl | $e2 |"
done

# Two DGX-A100 (8 x 200 Gb/s NICs each): NVIDIA measures 192 GB/s allreduce busbw (NVIDIA/nccl
# issue 812). NCCL's ring across nodes, one per channel on its own NIC, and its tree, written as
# Weft algorithms (weft/synthesis/nccl_algorithms.h), are predicted by `weftc synthesize` (its
# NCCL/W column, the faster of them; NCCL's model beside it).
if "$weftc" synthesize --help >/dev/null 2>&1; then
  gb=1073741824
  "$weftc" synthesize -t a100-nvswitch --nodes 2 -c allreduce -b 1G -e 1G -o "$work/ar2" \
    >"$work/out" 2>/dev/null
  as_weft_us=$(awk '$1 == "1G" { print $6; exit }' "$work/out")
  nccl_us=$(awk '$1 == "1G" { print $5; exit }' "$work/out")
  busbw=$(awk -v s=$gb -v t="$as_weft_us" 'BEGIN { printf "%.1f", 1.875 * s / (t * 1e3) }')
  nccl=$(awk -v s=$gb -v t="$nccl_us" 'BEGIN { printf "%.1f", 1.875 * s / (t * 1e3) }')
  e1=$(error "$busbw" 192)
  e2=$(error "$nccl" 192)
  errors+=("${e1% %}")
  echo "| 2×DGX-A100 (8×200 Gb/s NICs) | allreduce, NCCL's ring and tree as Weft's, busbw (GB/s) | 1 GB | 192 | NVIDIA/nccl#812 (NVIDIA's measurement; algorithm not stated) | $busbw | $e1 | $nccl | $e2 |"
fi

# label|measured file|compile arguments|sizes
own=(
  "ring allreduce, 8 channels, Simple|ring-8ch-simple.txt|allreduce_ring --ranks 8 --instances 8"
  "ring allreduce, 1 channel, Simple|ring-1ch-simple.txt|allreduce_ring --ranks 8"
  "ring allreduce, 8 channels, LL|ring-8ch-ll.txt|allreduce_ring --ranks 8 --instances 8 --proto LL"
  "ring allreduce, 4 channels, LL128|ring-4ch-ll128.txt|allreduce_ring --ranks 8 --instances 4 --proto LL128"
  "all-pairs allreduce, Simple|allpairs-simple.txt|allreduce_allpairs --ranks 8"
  "all-pairs allreduce, LL|allpairs-ll.txt|allreduce_allpairs --ranks 8 --proto LL"
)
for row in "${own[@]}"; do
  IFS='|' read -r what file compile <<<"$row"
  read -r -a cargs <<<"$compile"
  measured_file=$root/docs/performance/h100/$file
  "$weftc" compile "${cargs[@]}" -o "$work/a.xml" >/dev/null
  "$weftc" simulate "$work/a.xml" -t emulated --gpus-per-node 8 -b 1K -e 1G -f 1024 \
    >"$work/out" 2>/dev/null
  for s in 1024 1048576 1073741824; do
    measured=$(awk -v size=$s '$1 == size { print $6; exit }' "$measured_file")
    [ -n "$measured" ] || continue
    predicted=$(column "$work/out" 5 $s)
    e=$(error "$predicted" "$measured")
    errors+=("${e% %}")
    label=$(awk -v s=$s 'BEGIN { if (s >= 1073741824) print "1 GB"; else if (s >= 1048576) print "1 MB"; else print "1 KB" }')
    echo "| 8 ranks emulated on one H100 | $what, time (us) | $label | $measured | Weft's run, docs/performance/h100/$file | $predicted | $e | | |"
  done
done

printf '%s\n' "${errors[@]}" | tr -d '+-' | sort -g | awk '{ a[NR] = $1 } END {
  med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
  printf "\nWeft'\''s simulator: median |error| %.1f %% over %d figures, largest %.1f %%\n", med, NR, a[NR] }'
