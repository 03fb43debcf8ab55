#!/usr/bin/env bash
# Benchmark of `weftc verify` with default options: whole-run wall time and peak memory on the
# largest files of the MSCCL interop corpus (when ../shared/msccl-xml is present) and on a 32-rank
# all-pairs allreduce of about 96,000 steps generated here. Target for the 32-rank file: under 5 s
# and under 500 MB. Prints a table; exits non-zero if a verification fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
corpus=${WEFT_MSCCL_XML_DIR:-$root/../shared/msccl-xml}
[ -x "$build/tools/weftc/weftc" ] || bash "$root/scripts/build.sh"
command -v /usr/bin/time >/dev/null || bash "$root/scripts/install-deps.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=()
if [ -d "$corpus" ]; then
  # The five largest corpus files by step count.
  while read -r _ f; do files+=("$f"); done < <(
    for f in "$corpus"/*/*.xml; do echo "$(grep -c '<step' "$f") $f"; done | sort -rn | head -n 5)
else
  echo "note: $corpus not found; benchmarking the generated file only" >&2
fi
"$build/tests/make_allpairs_allreduce" 32 "$work/allreduce_allpairs_32.xml"
files+=("$work/allreduce_allpairs_32.xml")

printf '%-48s %6s %8s %6s %10s %10s %s\n' file ranks steps cases "time (s)" "peak (MB)" result
status=0
for f in "${files[@]}"; do
  steps=$(grep -c '<step' "$f")
  ranks=$(grep -o 'ngpus="[0-9]*"' "$f" | head -n 1 | tr -dc 0-9)
  if /usr/bin/time -f '%e %M' -o "$work/time" "$build/tools/weftc/weftc" verify -q "$f" >"$work/out" 2>&1; then
    result=PASS
  else
    result=FAIL
    status=1
  fi
  read -r secs kb <"$work/time"
  cases=$(grep -o '[0-9]* cases' "$work/out" | head -n 1 | tr -dc 0-9)
  name=$(basename "$(dirname "$f")")/$(basename "$f")
  [ ${#name} -le 48 ] || name=${name: -48}
  printf '%-48s %6s %8s %6s %10s %10.1f %s\n' "$name" "$ranks" "$steps" "${cases:-?}" "$secs" \
    "$(awk -v k="$kb" 'BEGIN{print k/1024}')" "$result"
  [ "$result" = PASS ] || sed 's/^/    /' "$work/out" | head -n 20
done
exit $status
