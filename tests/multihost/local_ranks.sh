#!/usr/bin/env bash
# Two processes as two hosts, each driving two ranks (weft-perf --local-ranks 2): the ranks of
# one process share its memory, those of the other are reached through the proxy.
#
#   local_ranks.sh WEFTC WEFT_PERF
set -uo pipefail
weftc=$1 perf=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$weftc" compile allreduce_hierarchical --nodes 2 --gpus-per-node 2 -o "$work/hier.xml" >/dev/null || exit 1
rendezvous="unix:weft-local-ranks-$$-$RANDOM"
export WEFT_TIMEOUT_S=${WEFT_TIMEOUT_S:-120}
WEFT_HOSTID=b "$perf" --device host --xml "$work/hier.xml" --rank 2 --local-ranks 2 --nranks 4 \
  --rendezvous "$rendezvous" -b 1K -e 256K -f 16 -n 1 -w 0 >"$work/b.log" 2>&1 &
other=$!
WEFT_HOSTID=a "$perf" --device host --xml "$work/hier.xml" --rank 0 --local-ranks 2 --nranks 4 \
  --rendezvous "$rendezvous" -b 1K -e 256K -f 16 -n 1 -w 0 | tee "$work/a.log"
first=${PIPESTATUS[0]}
wait "$other"
second=$?
cat "$work/b.log" | grep -v "^#" | head -5
if ((first == 0 && second == 0)) && grep -q "2 ranks per process" "$work/a.log" &&
   grep -q "across hosts: the proxy" "$work/a.log"; then
  echo "two ranks per process, right across hosts"
else
  echo "FAILED"
fi
