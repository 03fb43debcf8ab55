#!/usr/bin/env bash
# Faults across hosts, with real processes (host mode, one weft-perf per rank, 2 hosts × 2
# ranks): every surviving rank must end within WEFT_TIMEOUT_S (and a margin for the process to
# leave), with an error that names the peer's host and where its own call stopped (gpu / tb /
# step), and nothing may hang.
#
#   faults.sh WEFT_PERF killed        a rank of host1 is killed (SIGKILL) in the middle of calls
#   faults.sh WEFT_PERF stopped       a rank of host1 stops answering (SIGSTOP) in the middle
#   faults.sh WEFT_PERF unreachable   host0's UCX may use only TCP, host1's only shared memory
set -uo pipefail
perf=$1 fault=$2
timeout_s=5
export WEFT_TIMEOUT_S=$timeout_s
logs=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$logs"
}
trap cleanup EXIT
rendezvous="unix:weft-fault-$$-$RANDOM"
victim=3  # on host1
start_rank() {
  local rank=$1
  shift
  # Calls long enough to be interrupted: 16 MB allreduces, many of them.
  env "$@" WEFT_HOSTID="host$((rank / 2))" "$perf" --device host --builtin ring --rank "$rank" \
    --nranks 4 --rendezvous "$rendezvous" -b 16M -e 16M -n 100000 -w 0 -c 0 \
    >"$logs/$rank.log" 2>&1 &
  pids+=($!)
}
for rank in 0 1 2 3; do
  case $fault in
    unreachable) start_rank "$rank" UCX_TLS=$([ "$rank" -lt 2 ] && echo tcp || echo sm) ;;
    *) start_rank "$rank" ;;
  esac
done

if [ "$fault" != unreachable ]; then
  # Mid-call: rank 0 has printed its table's header (the rendezvous, the proxies and the
  # algorithm are set up), and calls have run a while.
  for _ in $(seq 600); do
    grep -q "(elements)" "$logs/0.log" 2>/dev/null && break
    sleep 0.1
  done
  grep -q "(elements)" "$logs/0.log" || { echo "FAILED: the ranks never started"; cat "$logs"/*.log; exit 1; }
  sleep 2
  case $fault in
    killed) kill -9 "${pids[$victim]}" ;;
    stopped) kill -STOP "${pids[$victim]}" ;;
    *) echo "unknown fault '$fault'"; exit 2 ;;
  esac
fi
started=$(date +%s.%N)
# Every other rank must end by itself, with an error, within the timeout and a margin.
limit=$((timeout_s + 25))
status=0
for rank in 0 1 2 3; do
  [ "$fault" != unreachable ] && [ "$rank" = "$victim" ] && continue
  for _ in $(seq $((limit * 10))); do
    kill -0 "${pids[$rank]}" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "${pids[$rank]}" 2>/dev/null; then
    echo "FAILED: rank $rank still runs ${limit} s after the fault"
    status=1
    continue
  fi
  wait "${pids[$rank]}"
  code=$?
  took=$(echo "$(date +%s.%N) - $started" | bc)
  message=$(grep "weft-perf:" "$logs/$rank.log" | tail -1)
  echo "rank $rank: exit $code after ${took} s: $message"
  if [ "$code" = 0 ]; then
    echo "FAILED: rank $rank succeeded"
    status=1
  fi
  case $fault in
    unreachable) want="UCX cannot reach participant|could not reach every other host" ;;
    *) want="host 'host1'" ;;
  esac
  if ! grep -Eq "$want" <<<"$message"; then
    echo "FAILED: rank $rank's error does not name the peer ($want)"
    status=1
  fi
  if [ "$fault" != unreachable ] && ! grep -Eq "gpu [0-9]+ / tb [0-9]+ / step [0-9]+" <<<"$message"; then
    echo "FAILED: rank $rank's error does not say where its call stopped"
    status=1
  fi
done
[ "$status" = 0 ] && echo "every rank ended, naming the fault"
exit "$status"
