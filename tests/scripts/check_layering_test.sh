#!/usr/bin/env bash
# check-layering.sh on small trees made here, each with its own layers.txt, documents and
# manifest: a clean tree passes; an include up the list, a link up the list, a part that uses one
# listed after it, and a README that no longer quotes the list are each found and named.
# Exit 0 when every case holds.
set -uo pipefail
script=${1:?usage: check_layering_test.sh path/to/check-layering.sh}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0

# A tree of two parts, low below high, whose documents quote its list.
make_tree() {
  local t=$1
  mkdir -p "$t/low/include/weft/low" "$t/high/src" "$t/docs" "$t/build"
  printf '# the list\nlow    low/     -\nhigh   high/    low\n' > "$t/layers.txt"
  for doc in "$t/README.md" "$t/docs/architecture.md"; do
    printf 'Layers:\n\n```\nlow    low/     -\nhigh   high/    low\n```\n' > "$doc"
  done
  echo '#pragma once' > "$t/low/include/weft/low/low.h"
  printf '#include "weft/low/low.h"\n' > "$t/high/src/high.cpp"
  printf 'weft_low|%s/low||low|\nweft_high|%s/high||high|weft_low\n' "$t" "$t" \
    > "$t/build/layering-targets.txt"
}
# check NAME WANTED_EXIT WANTED_TEXT: runs the checker on $work/NAME.
check() {
  local out code
  out=$(WEFT_LAYERING_ROOT="$work/$1" bash "$script" "$work/$1/build" 2>&1)
  code=$?
  if [[ $code -ne $2 || "$out" != *"$3"* ]]; then
    printf 'FAIL %s: exit %s, wanted %s with "%s":\n%s\n' "$1" "$code" "$2" "$3" "$out"
    bad=1
  else
    echo "ok $1"
  fi
}

make_tree "$work/clean"
check clean 0 "every include stays within its library"

make_tree "$work/include-up"
printf '#include "weft/high/high.h"\n' > "$work/include-up/low/include/weft/low/up.h"
check include-up 1 "low/include/weft/low/up.h:1: includes weft/high/high.h, of part 'high'"

make_tree "$work/link-up"
printf 'weft_low|%s/low||low|weft_high\nweft_high|%s/high||high|\n' "$work/link-up" \
  "$work/link-up" > "$work/link-up/build/layering-targets.txt"
check link-up 1 "target weft_low (low) links weft_high (high)"

make_tree "$work/list-up"
printf 'low    low/     high\nhigh   high/    low\n' > "$work/list-up/layers.txt"
check list-up 1 "layers.txt:1: low uses 'high', which is not listed above it"

make_tree "$work/stale-quote"
printf 'Layers:\n\n```\nlow    low/     -\n```\n' > "$work/stale-quote/README.md"
check stale-quote 1 "README.md: does not quote layers.txt"

exit $bad
