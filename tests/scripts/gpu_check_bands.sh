#!/usr/bin/env bash
# gpu-check.sh's band handling and run verdicts without a GPU: band_sizes, check_file and
# run_perf taken from the script as they are, with stand-ins for weft-perf that print what a
# pass, a wrong result and a launch too large for one GPU print. Exit 0 when every case holds.
set -uo pipefail
script=${1:?usage: gpu_check_bands.sh path/to/gpu-check.sh}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
eval "$(sed -n '/^run_perf() {/,/^}/p; /^band_sizes() {/,/^}/p; /^check_file() {/,/^}/p' "$script")"
for f in run_perf band_sizes check_file; do
  declare -F "$f" > /dev/null || { echo "gpu-check.sh has no function $f"; exit 1; }
done

bad=0
expect() {  # what, got, wanted
  if [[ "$2" != "$3" ]]; then echo "FAIL $1: got '$2', wanted '$3'"; bad=1; else echo "ok $1"; fi
}
band() {  # file min max
  echo "<algo name=\"a\" ngpus=\"8\" minBytes=\"$2\" maxBytes=\"$3\">" > "$work/$1"
}
band low.xml 0 131071
band mid.xml 1048576 4194303
band high.xml 67108864 268435455
band top.xml 268435456 0
echo '<algo name="a" ngpus="8">' > "$work/none.xml"
M=$((1 << 20))
expect "no band: the step's range" "$(band_sizes "$work/none.xml" 1024 $M $((64 * M)))" "-b 1024 -e $M"
expect "band inside the range" "$(band_sizes "$work/low.xml" 1024 $M $((64 * M)))" "-b 1024 -e 131071"
expect "band across the top" "$(band_sizes "$work/mid.xml" 1024 $((2 * M)) $((64 * M)))" \
  "-b $M -e $((2 * M))"
expect "band above, within the cap" "$(band_sizes "$work/high.xml" 1024 $M $((64 * M)))" \
  "-b $((64 * M)) -e $((64 * M))"
expect "band above the cap" "$(band_sizes "$work/top.xml" 1024 $M $((64 * M)))" ""
expect "band below the range" "$(band_sizes "$work/low.xml" $M $((16 * M)) $((64 * M)))" \
  "-b 131071 -e 131071"

# Stand-ins for weft-perf: a row has 16 fields, #wrong in 9 (out of place) and 14 (in place).
cat > "$work/pass" << 'P'
#!/bin/bash
echo "# header"
echo "1024 256 float sum 0 1.0 1.0 1.0 0 1.0 N/A N/A N/A N/A N/A 4096"
echo "2048 512 float sum 0 1.0 1.0 1.0 0 1.0 1.0 1.0 1.0 0 1.0 8192"
P
cat > "$work/outside" << 'P'
#!/bin/bash
echo "1024 256 float sum 0 N/A N/A N/A N/A N/A N/A N/A N/A N/A N/A 4096"
P
cat > "$work/unfit" << 'P'
#!/bin/bash
echo "weft-perf: 1024 bytes out-of-place: not resident: the launch needs 1792 threadblocks resident at once on device 0"
exit 1
P
cat > "$work/wrong" << 'P'
#!/bin/bash
echo "weft-perf: 1024 bytes out-of-place: 3 elements wrong"
exit 1
P
chmod +x "$work"/pass "$work"/outside "$work"/unfit "$work"/wrong
variant=lean summary=$work/summary failures=() unfit=()
perf_runs=0 perf_failed=0 perf_unfit=0 perf_unchecked=0 perf_cells=0 perf_beyond=0
fail() { failures+=("$1"); }
run() { perf=$work/$1; check_file "$2" "$work/$3" 8 1024 $M $((64 * M)) 32 > "$work/out" 2>&1; }

run pass a none.xml
expect "a pass counts its cells" "$(head -1 "$work/out")" "ok a [lean]: none wrong of 3 checked (size, call mode)"
run outside b none.xml
expect "nothing checked is said" "$perf_unchecked" 1
run unfit c none.xml
expect "not resident: listed apart" "$perf_unfit/${unfit[*]}/${#failures[@]}" "1/c [lean]/0"
run wrong d none.xml
expect "a wrong result fails" "$perf_failed/${failures[*]}" "1/weft-perf d [lean]"
run pass e top.xml
expect "a band above the cap is not run" "$perf_beyond/$perf_runs" "1/4"
expect "cells in all" "$perf_cells" 3
exit $bad
