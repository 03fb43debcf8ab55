#!/usr/bin/env bash
# No function over 150 lines in the compiler, synthesis and the prediction and tuning libraries: a
# function that long does several jobs, and each job wants its own name (issue 61).
# Usage: scripts/check-function-length.sh [FOLDER...]
#   FOLDERs relative to the tree's root, or absolute (default: synthesis compiler/src
#   runtime/predict runtime/tuning); their C++ sources and headers, at any depth.
# A function's length is its last line's number less its first's, as universal-ctags gives them
# (the `end:` and `line:` fields). Exit status 1 with every function over the limit listed as
# "file:line: NAME is N lines (at most 150)", 0 when there is none, and 77 (what CTest reads as
# skipped) when universal-ctags is not installed: exuberant ctags gives no end lines.
set -euo pipefail
readonly max_lines=150
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if (($# == 0)); then
  set -- synthesis compiler/src runtime/predict runtime/tuning
fi

ctags_bin=
for candidate in ctags ctags-universal universal-ctags; do
  if command -v "$candidate" > /dev/null 2>&1 &&
    "$candidate" --version 2> /dev/null | grep -q "Universal Ctags"; then
    ctags_bin=$candidate
    break
  fi
done
if [[ -z "$ctags_bin" ]]; then
  echo "check-function-length: universal-ctags is not installed (Debian: universal-ctags;" \
    "scripts/install-deps.sh installs it); nothing checked" >&2
  exit 77
fi
for folder in "$@"; do
  if [[ ! -d "$folder" ]]; then
    echo "check-function-length: no folder $folder" >&2
    exit 2
  fi
done

# Function definitions only (kind f: free functions and member functions defined in place), in
# the files' own order; the listing is sorted by file and line so that it reads as a compiler's.
findings=$("$ctags_bin" -R --languages=C++ --kinds-C++=f --fields=+ne --sort=no -o - "$@" |
  awk -F'\t' -v max="$max_lines" '
    {
      line = ""; end = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) line = substr($i, 6)
        if ($i ~ /^end:/) end = substr($i, 5)
      }
      if (line != "" && end != "" && end - line > max)
        printf "%s:%d: %s is %d lines (at most %d)\n", $2, line, $1, end - line, max
    }' | sort -t: -k1,1 -k2,2n)

if [[ -n "$findings" ]]; then
  echo "$findings"
  echo "check-function-length: $(wc -l <<< "$findings") function(s) over $max_lines lines:" \
    "split each where it does several jobs" >&2
  exit 1
fi
echo "check-function-length: every function in $* is at most $max_lines lines"
