#!/usr/bin/env bash
# Fuzzes what reads MSCCL XML with libFuzzer.
#
#   scripts/fuzz-xml.sh [SECONDS] [TARGET]      default 600 s, target "loader"
#
# TARGET: "loader" (reader, validation, analysis, writer: fuzz_xml_loader) or "executor" (every
# accepted input run by the CPU reference executor with the race check: fuzz_cpu_executor).
#
# Builds the target in its own clang build folder (build-fuzz, or
# $WEFT_FUZZ_BUILD_DIR) with -fsanitize=fuzzer,address,undefined, seeds a corpus from
# tests/data/xml and, when present, the third-party MSCCL files in ../shared/msccl-xml, runs one
# fuzzing job for SECONDS and prints a summary. Crashing inputs are kept in
# <build>/fuzz-artifacts/; the exit status is non-zero when there are any.
set -euo pipefail

seconds="${1:-600}"
target_name="${2:-loader}"
usage="usage: $0 [SECONDS] [loader|executor]   (SECONDS: a positive whole number, default 600)"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "$usage" >&2
  exit 2
fi
case "$target_name" in
  loader) target=fuzz_xml_loader ;;
  executor) target=fuzz_cpu_executor ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=fuzz-common.sh
source "$root/scripts/fuzz-common.sh"
build="${WEFT_FUZZ_BUILD_DIR:-$root/build-fuzz}"
shared_corpus="${WEFT_MSCCL_XML_DIR:-$root/../shared/msccl-xml}"
work_corpus="$build/fuzz-corpus/$target_name"
artifacts="$build/fuzz-artifacts/$target_name"
log="$build/fuzz-$target_name.log"

for tool in clang clang++ cmake ninja; do
  command -v "$tool" >/dev/null || { echo "fuzz-xml: '$tool' not found" >&2; exit 2; }
done

fuzz_build "$build" "$target"

# Inputs up to 160 KiB: the size of most real files (36 of the 44 in the corpus; the four
# largest all-pairs and allgather files, 250-640 KiB, take about a second per run under the
# sanitizers and would starve the search). Larger seeds are left out rather than cut short,
# since a truncated file only ever reaches the parse error path.
max_len=163840
mkdir -p "$work_corpus" "$artifacts"
find "$work_corpus" -type f -size +"${max_len}"c -delete  # left by an earlier, wider run
seed() {
  local file="$1" name="$2"
  if [ "$(stat -c %s "$file")" -le "$max_len" ]; then cp -f "$file" "$work_corpus/$name"; fi
}
for file in "$root"/tests/data/xml/*.xml; do seed "$file" "$(basename "$file")"; done
if [ -d "$shared_corpus" ]; then
  while read -r file; do
    # Flatten ndv4/ap2ll.xml to ndv4_ap2ll.xml: several folders share file names.
    rel="${file#"$shared_corpus"/}"
    seed "$file" "${rel//\//_}"
  done < <(find "$shared_corpus" -name '*.xml' -type f | sort)
else
  echo "fuzz-xml: $shared_corpus absent; seeding from tests/data/xml only"
fi

existing_artifacts=$(find "$artifacts" -type f | wc -l)
echo "fuzz-xml: $target, ${seconds} s, one job, max_len ${max_len}, seeds $(find "$work_corpus" -type f | wc -l)"
set +e
"$build/tests/fuzz/$target" \
  -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=4096 \
  -dict="$root/tests/fuzz/msccl_xml.dict" -artifact_prefix="$artifacts/" \
  -print_final_stats=1 "$work_corpus" >"$log" 2>&1
status=$?
set -e

fuzz_summary "fuzz-xml summary ($target)" "$log" "$artifacts" "$existing_artifacts" "$status"
