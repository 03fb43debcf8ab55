#!/usr/bin/env bash
# How long the first README command's build takes: weftc and weft-perf from an empty build folder,
# as scripts/demo.sh builds them on a machine without a GPU (CUDA off), here and, with --vs REV,
# at another git revision, one after the other in one run (a noisy machine then affects both
# alike). Prints a table: wall time, build steps, and the slowest translation units.
# Usage: scripts/bench-build.sh [--vs REV] [--jobs N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vs=""
jobs=${WEFT_JOBS:-$(nproc 2>/dev/null || echo 2)}
while [[ $# -gt 0 ]]; do
  case $1 in
    --vs) vs=${2:?--vs needs a revision}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "bench-build: unknown argument '$1' (--vs REV, --jobs N)" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-bench-build.XXXXXX")
trap 'git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# build LABEL SOURCE_DIR: prints "LABEL seconds steps" and keeps the ninja log.
build() {
  local label=$1 src=$2 dir=$work/build-$1
  cmake -S "$src" -B "$dir" -G Ninja -DWEFT_ENABLE_CUDA=OFF -DWEFT_WERROR=ON >/dev/null
  local start=$SECONDS
  cmake --build "$dir" -j "$jobs" --target weftc weft-perf >/dev/null
  local seconds=$((SECONDS - start))
  local steps
  steps=$(awk 'NR > 1' "$dir/.ninja_log" | wc -l)
  echo "$label $seconds $steps" >> "$work/results"
  awk -v label="$label" 'NR > 1 { printf "%s %.1f %s\n", label, ($2 - $1) / 1000, $4 }' \
    "$dir/.ninja_log" | sort -k2 -n -r | awk 'NR <= 5' >> "$work/slowest"
}

if [[ -n $vs ]]; then
  git -C "$root" worktree add --detach "$work/src" "$vs" >/dev/null 2>&1 ||
    { echo "bench-build: '$vs' is not a revision of this repository" >&2; exit 2; }
  echo "bench-build: building weftc and weft-perf at $vs ..." >&2
  build before "$work/src"
fi
echo "bench-build: building weftc and weft-perf in $root ..." >&2
build now "$root"

printf '\n| build | wall time | steps |\n|---|---|---|\n'
while read -r label seconds steps; do
  printf '| %s | %d min %02d s | %d |\n' "$label" $((seconds / 60)) $((seconds % 60)) "$steps"
done < "$work/results"
printf '\nslowest translation units (seconds, -j %s):\n' "$jobs"
cat "$work/slowest"
