#!/usr/bin/env bash
# Benchmark of `weftc compile`'s proof at scale: each case is a compile command as a user types
# it (compile + proof on the CPU reference executor + writing the XML), measured as a whole
# process: wall time and peak memory, against its target. Prints one table of cases; exits
# non-zero if a command fails or misses its target. Add a case with one `case` line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
command -v /usr/bin/time >/dev/null || bash "$root/scripts/install-deps.sh"
if [ ! -x "$build/tools/weftc/weftc" ]; then
  cmake --build "$build" --target weftc >/dev/null 2>&1 || bash "$root/scripts/build.sh"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-78s %8s %9s %-18s %s\n' command "wall s" "peak MB" target "met?"
status=0
# case MAX_SECONDS MAX_MB ARGS...: runs `weftc ARGS... -o FILE` and prints its row.
case_() {
  row "$@" -o "$work/out.xml"
}
# row MAX_SECONDS MAX_MB ARGS...: runs `weftc ARGS...` as given and prints its row.
row() {
  local max_s=$1 max_mb=$2
  shift 2
  local shown="weftc $*"
  shown=${shown//$work/TMP}
  local met=yes
  if ! /usr/bin/time -f '%e %M' -o "$work/time" "$build/tools/weftc/weftc" "$@" \
    >"$work/log" 2>&1; then
    met="no (failed)"
  fi
  local secs kb mb
  read -r secs kb < <(tail -n 1 "$work/time")
  mb=$(awk -v k="$kb" 'BEGIN{printf "%.0f", k/1024}')
  if [ "$met" = yes ] && ! awk -v s="$secs" -v m="$mb" -v S="$max_s" -v M="$max_mb" \
    'BEGIN{exit !(s <= S && m <= M)}'; then
    met=no
  fi
  printf '%-78s %8s %9s %-18s %s\n' "$shown" "$secs" "$mb" "≤ $max_s s, ≤ $max_mb MB" "$met"
  if [ "$met" != yes ]; then
    status=1
    [ "$met" = yes ] || tail -n 5 "$work/log" | sed 's/^/    /'
  fi
}
case_ 1 200 compile allreduce_ring --ranks 256 --channels 8
case_ 30 4096 compile alltoall_two_step --nodes 128 --gpus-per-node 8
case_ 30 4096 compile alltoall_direct --ranks 1024 --profile weft
# Prediction (docs/prediction.md): a 64-rank ring at 1 GB, and a whole tuning run.
"$build/tools/weftc/weftc" compile allreduce_ring --ranks 64 --profile weft -o "$work/ring64.xml" \
  >/dev/null
row 1 4096 simulate "$work/ring64.xml" --topology h100-nvswitch --nodes 8 -b 1G -e 1G
row 60 4096 tune --topology h100-nvswitch --collective allreduce --ranks 8 -b 1K -e 1G \
  -o "$work/tuned"
exit $status
