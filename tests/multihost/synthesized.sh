#!/usr/bin/env bash
# Acceptance across hosts, without a GPU: algorithms written for two nodes run in host mode with
# one process per rank, the ranks of each node on one host id (tests/multihost/run-ranks.sh), so
# every connection between the nodes goes through the proxies over UCX. weft-perf checks every
# rank's output against the CPU reference executor (#wrong).
#
#   synthesized.sh WEFTC WEFT_PERF GPUS_PER_NODE COLLECTIVE [MAX_THREADBLOCKS [sketches]]
#       the collective synthesized for a100-nvswitch × 2 nodes, out of place and in place: every
#       file of each folder (the band winners), and with `sketches` every sketch synthesis wrote
#       (--all), chosen or not
#   synthesized.sh WEFTC WEFT_PERF GPUS_PER_NODE library:NAME [MAX_THREADBLOCKS]
#       the library's NAME compiled for 2 nodes (both call modes where it declares them)
#
# Each file runs at 1 KB and 256 KB (LL128: 32 KB; --any-size: a band says where a file was
# fastest, not where it is right), in each call mode it was made for. Host mode starts a thread per GPU thread, 32 per
# threadblock, and a 2-core machine holds about 32,000 (and runs them slowly): a file with more
# than MAX_THREADBLOCKS (default 512) threadblocks in all is named and left out.
set -uo pipefail
weftc=$1 perf=$2 gpus=$3 what=$4 budget=${5:-512} sketches=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WEFT_TIMEOUT_S=${WEFT_TIMEOUT_S:-120}

folders=()
if [[ $what == library:* ]]; then
  name=${what#library:}
  mkdir -p "$work/library"
  "$weftc" compile "$name" --nodes 2 --gpus-per-node "$gpus" -o "$work/library/$name.xml" \
    >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
  folders+=("$work/library")
else
  for mode in out in; do
    flags=()
    [ "$mode" = in ] && flags+=(--in-place)
    [ "$sketches" = sketches ] && flags+=(--all)
    "$weftc" synthesize -t a100-nvswitch --nodes 2 --gpus-per-node "$gpus" -c "$what" \
      "${flags[@]}" -o "$work/$mode" >"$work/synthesize-$mode.log" 2>&1 ||
      { cat "$work/synthesize-$mode.log"; exit 1; }
    folders+=("$work/$mode")
    [ "$sketches" = sketches ] && folders+=("$work/$mode/sketches")
  done
fi

status=0 ran=0
for folder in "${folders[@]}"; do
  for file in "$folder"/*.xml; do
    tbs=$(grep -c '<tb ' "$file")
    if ((tbs > budget)); then
      echo "left out: $(basename "$file"): $tbs threadblocks, more than host mode starts here ($budget)"
      continue
    fi
    # Host mode moves an LL128 line with a barrier of its 32 threads: 32 KB is its second size.
    largest=256K factor=256
    grep -q 'proto="LL128"' "$file" && largest=32K factor=32
    out=$("$here/run-ranks.sh" "$perf" 2 "$gpus" local -- --xml "$file" --any-size \
          -b 1K -e "$largest" -f "$factor" -n 1 -w 0 2>&1)
    code=$?
    # Rows: size count type op root, then time algbw busbw #wrong copybw out of place (#wrong is
    # field 9) and in place (field 14); a crash's backtrace ("  3  /lib/...") is no row. Every
    # mode the file declares must have run and be right.
    inplace=$(grep -o 'inplace="[01]"' "$file" | head -1 | grep -o '[01]')
    outofplace=$(grep -o 'outofplace="[01]"' "$file" | head -1 | grep -o '[01]')
    verdict=$(awk -v in_place="$inplace" -v out_of_place="$outofplace" '
      /^ +[0-9]+ +[0-9]+ +[a-z]/ { rows++
        if (out_of_place == 1 && $9 != "0") bad = bad " " $1 " B out of place: #wrong " $9
        if (in_place == 1 && $14 != "0") bad = bad " " $1 " B in place: #wrong " $14 }
      END { if (rows < 2) print "only " rows + 0 " rows"; else if (bad != "") print bad }' <<<"$out")
    if ((code != 0)) || [ -n "$verdict" ]; then
      echo "FAILED: $(basename "$file") ($tbs threadblocks): ${verdict:-exit $code}"
      echo "$out"
      status=1
    else
      echo "right: ${folder#"$work"/}/$(basename "$file") ($tbs threadblocks; in place $inplace, out of place $outofplace)"
      ran=$((ran + 1))
    fi
  done
done
if ((ran == 0)); then
  echo "FAILED: no file could run"
  status=1
fi
echo "$ran file(s) right across 2 hosts × $gpus ranks"
exit "$status"
