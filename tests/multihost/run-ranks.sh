#!/usr/bin/env bash
# Runs one weft-perf process per rank, the ranks split over hosts in contiguous blocks (each
# host a WEFT_HOSTID), and checks that every process succeeded. Host mode: no GPU needed.
#
#   run-ranks.sh WEFT_PERF HOSTS RANKS_PER_HOST RENDEZVOUS -- WEFT_PERF_ARGS...
#
# RENDEZVOUS is weft-perf's (host:port, or unix:NAME for a local socket; "local" makes a fresh
# one). Rank 0's output is printed; any other rank's output only when it failed. Exit status: 0
# when every rank exited 0, else 1.
set -uo pipefail
perf=$1 hosts=$2 per_host=$3 rendezvous=$4
shift 4
[ "$rendezvous" = local ] && rendezvous="unix:weft-test-$$-$RANDOM$RANDOM"
[ "${1:-}" = "--" ] && shift
nranks=$((hosts * per_host))
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for ((rank = 0; rank < nranks; ++rank)); do
  WEFT_HOSTID="host$((rank / per_host))" "$perf" --device host --rank "$rank" --nranks "$nranks" \
    --rendezvous "$rendezvous" "$@" >"$logs/$rank.log" 2>&1 &
  pids+=($!)
done
status=0
for ((rank = 0; rank < nranks; ++rank)); do
  if ! wait "${pids[$rank]}"; then
    status=1
    echo "== rank $rank failed:"
    cat "$logs/$rank.log"
  fi
done
cat "$logs/0.log"
exit "$status"
