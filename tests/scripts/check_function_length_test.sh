#!/usr/bin/env bash
# check-function-length.sh on folders made here: a function one line over the limit is listed with
# its file, line and length, one at the limit is not, a member function defined in a header counts
# too; a folder of short functions passes; without universal-ctags the check ends as skipped (77).
# Exit 0 when every case holds, 77 when universal-ctags is not installed here.
set -uo pipefail
script=${1:?usage: check_function_length_test.sh path/to/check-function-length.sh}
if ! ctags --version 2> /dev/null | grep -q "Universal Ctags"; then
  echo "universal-ctags is not installed: nothing to check the checker with"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bad=0
expect() {  # what, got, wanted
  if [[ "$2" != "$3" ]]; then
    printf 'FAIL %s:\n--- got ---\n%s\n--- wanted ---\n%s\n' "$1" "$2" "$3"
    bad=1
  else
    echo "ok $1"
  fi
}
# function FILE NAME SPAN [INDENT]: appends a function whose last line is SPAN lines after its
# first (the length the checker measures).
function_of() {
  local indent=${4:-}
  {
    echo "${indent}int $2(int x) {"
    for ((k = 1; k < $3; ++k)); do echo "${indent}  x += $k;"; done
    echo "${indent}  return x; }"
  } >> "$1"
}

mkdir -p "$work/long/sub" "$work/short"
echo "// fixture" > "$work/long/a.cpp"
function_of "$work/long/a.cpp" at_the_limit 150
function_of "$work/long/a.cpp" one_over 151
{
  echo "#pragma once"
  echo "struct Holder {"
} > "$work/long/sub/b.h"
function_of "$work/long/sub/b.h" member_too_long 200 "  "
echo "};" >> "$work/long/sub/b.h"
function_of "$work/short/c.cpp" short_one 10

out=$("$script" "$work/long" 2> /dev/null)
expect "a long folder fails" "$?" 1
expect "a long folder lists each function over the limit, by file and line" "$out" \
  "$work/long/a.cpp:153: one_over is 151 lines (at most 150)
$work/long/sub/b.h:3: member_too_long is 200 lines (at most 150)"

out=$("$script" "$work/short" 2>&1)
expect "a folder of short functions passes" "$?" 0
expect "a folder of short functions says so" "$out" \
  "check-function-length: every function in $work/short is at most 150 lines"

# A PATH with the tools the script needs but no universal-ctags: an exuberant one in its place.
mkdir "$work/bin"
for tool in bash dirname grep; do ln -s "$(command -v "$tool")" "$work/bin/$tool"; done
printf '#!%s\necho "Exuberant Ctags 5.8"\n' "$(command -v bash)" > "$work/bin/ctags"
chmod +x "$work/bin/ctags"
out=$(PATH="$work/bin" "$(command -v bash)" "$script" "$work/long" 2>&1)
expect "without universal-ctags the check is skipped" "$?" 77
[[ "$out" == *"universal-ctags is not installed"* ]] || {
  echo "FAIL the skip says why: $out"
  bad=1
}
exit $bad
