#!/usr/bin/env bash
# GPU check across hosts (docs/architecture.md §6), called by scripts/gpu-check.sh (step
# `hosts`); needs one GPU. Usage: scripts/gpu-check-hosts.sh [BUILD_DIR]
#
#   1. The probe: what the machine offers for a later, real multi-host run — NCCL's version;
#      whether two processes on the one GPU with different NCCL_HOSTID form an NCCL communicator
#      over its socket transport (PyTorch's NCCL, when python3 has torch); whether GPUDirect RDMA
#      (gdrdrv) and RDMA devices are present; the UCX transports.
#   2. Two processes on the one GPU act as two hosts (WEFT_HOSTID a and b), four emulated ranks
#      each (weft-perf --local-ranks 4), UCX over loopback TCP, the proxies staging through
#      pinned host memory: every file `weftc synthesize -t a100-nvswitch --nodes 2
#      --gpus-per-node 4` writes for allgather, reducescatter, allreduce and alltoall, from 1 KB
#      to 64 MB, each checked against the CPU reference (#wrong 0). Two processes' kernels run
#      side by side only under MPS: it is started when nvidia-cuda-mps-control exists and
#      stopped after; without it the kernels take turns by time slice (slow, still right).
#
# Logs go to $WEFT_GPU_CHECK_LOGS (default: a temporary folder). Exit status: 0 when every
# check passed; the probe's findings are reported, never failed.
#
# WEFT_HOSTS_CHECK_DEVICE=host rehearses the script without a GPU: weft-perf in host mode, and
# only the files of at most 128 threadblocks (host mode starts a thread per GPU thread).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${WEFT_BUILD_DIR:-$root/build}}
perf=$build/runtime/tools/weft-perf/weft-perf
weftc=$build/tools/weftc/weftc
logs=${WEFT_GPU_CHECK_LOGS:-$(mktemp -d -t weft-hosts-check-XXXXXX)}
mkdir -p "$logs"
[[ -x $perf && -x $weftc ]] || cmake --build "$build" --target weft-perf weftc || exit 1
quick=${WEFT_HOSTS_CHECK_QUICK:-0}
device=()
# Both processes' launches must be resident on the one GPU at once (each waits for the other's
# messages): an H100's or H200's 132 SMs hold about 1,056 threadblocks of 64 threads, so a file
# of more than 1,024 in all (512 per process) is left out, named.
max_tbs=1024
if [[ ${WEFT_HOSTS_CHECK_DEVICE:-} == host ]]; then device=(--device host); max_tbs=128; fi

echo "== probe"
echo "NCCL: $("$weftc" --version 2>&1 | grep -i nccl | tr '\n' ' ')"
if [[ -e /dev/gdrdrv ]] || lsmod 2>/dev/null | grep -q '^gdrdrv'; then
  echo "GPUDirect RDMA: gdrdrv present"
else
  echo "GPUDirect RDMA: no gdrdrv (no /dev/gdrdrv, no module)"
fi
if compgen -G "/sys/class/infiniband/*" > /dev/null; then
  echo "RDMA devices: $(ls /sys/class/infiniband | tr '\n' ' ')"
else
  echo "RDMA devices: none (/sys/class/infiniband is empty or absent)"
fi
if command -v ucx_info > /dev/null; then
  echo "UCX: $(ucx_info -v | head -1); transports: $(ucx_info -d | awk '/Transport:/ {print $3}' | sort -u | tr '\n' ' ')"
else
  echo "UCX: no ucx_info (the carried libucp is used: $(ldconfig -p 2>/dev/null | grep -c libucp) system copies)"
fi
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  cat > "$logs/nccl_hostid.py" <<'PY'
# Two processes on GPU 0 with different NCCL_HOSTID: does NCCL form a communicator (over its
# socket transport) and reduce right?
import os, sys, torch, torch.distributed as dist
rank = int(sys.argv[1])
os.environ["NCCL_HOSTID"] = f"probe-host-{rank}"
torch.cuda.set_device(0)
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=rank,
                        world_size=2)
x = torch.full((1024,), float(rank + 1), device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {rank}: allreduce {'right' if float(x[0]) == 3.0 else 'WRONG'}", flush=True)
dist.destroy_process_group()
PY
  port=$((20000 + RANDOM % 20000))
  env NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_DEBUG=INFO timeout 120 \
    python3 "$logs/nccl_hostid.py" 1 "$port" > "$logs/nccl-hostid-1.log" 2>&1 &
  other=$!
  if env NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_DEBUG=INFO timeout 120 \
      python3 "$logs/nccl_hostid.py" 0 "$port" > "$logs/nccl-hostid-0.log" 2>&1 && wait "$other"; then
    echo "NCCL_HOSTID: two processes on one GPU with different host ids formed a communicator: $(grep -h 'allreduce' "$logs"/nccl-hostid-*.log | tr '\n' ' ')"
    grep -h "NET/Socket\|via NET" "$logs"/nccl-hostid-0.log | head -3
  else
    wait "$other" 2>/dev/null
    echo "NCCL_HOSTID: no communicator formed; the last lines:"
    tail -5 "$logs"/nccl-hostid-*.log
  fi
else
  echo "NCCL_HOSTID: not probed (python3 has no torch that sees a GPU)"
fi

echo "== two processes as two hosts, 4 emulated ranks each, UCX over loopback TCP"
mps=0
if command -v nvidia-cuda-mps-control > /dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=$logs/mps-pipe CUDA_MPS_LOG_DIRECTORY=$logs/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then mps=1; echo "MPS started"; fi
fi
((mps)) || echo "no MPS: the two processes' kernels take turns by time slice (WEFT_TIMEOUT_S raised)"
export UCX_TLS=tcp UCX_NET_DEVICES=lo WEFT_TIMEOUT_S=${WEFT_TIMEOUT_S:-120}
top=64M factor=16
((quick)) && top=4M
passed=0 failed=0 na=0
for c in allgather reducescatter allreduce alltoall; do
  if ! "$weftc" synthesize -t a100-nvswitch --nodes 2 --gpus-per-node 4 -c "$c" -b 1K -e "$top" \
      -o "$logs/synth-$c" --force > "$logs/synth-$c.log" 2>&1; then
    echo "FAILED: weftc synthesize $c"; tail -5 "$logs/synth-$c.log"; failed=$((failed + 1)); continue
  fi
  for file in "$logs/synth-$c"/*.xml; do
    name=$(basename "$file" .xml)
    if ((max_tbs > 0)) && (($(grep -c '<tb ' "$file") > max_tbs)); then
      echo "left out: $c $name ($(grep -c '<tb ' "$file") threadblocks, more than $max_tbs)"
      continue
    fi
    rendezvous="unix:weft-hosts-$$-$RANDOM"
    WEFT_HOSTID=b timeout 600 "$perf" "${device[@]}" --xml "$file" --any-size --rank 4 --local-ranks 4 \
      --nranks 8 --rendezvous "$rendezvous" -b 1K -e "$top" -f "$factor" -n 2 -w 1 -c 1 \
      > "$logs/$c-$name-b.txt" 2>&1 &
    other=$!
    WEFT_HOSTID=a timeout 600 "$perf" "${device[@]}" --xml "$file" --any-size --rank 0 --local-ranks 4 \
      --nranks 8 --rendezvous "$rendezvous" -b 1K -e "$top" -f "$factor" -n 2 -w 1 -c 1 \
      > "$logs/$c-$name-a.txt" 2>&1
    first=$?
    wait "$other"
    second=$?
    rows=$(grep -cE '^ +[0-9]' "$logs/$c-$name-a.txt")
    wrong=$(awk '/^ +[0-9]+ +[0-9]+ +[a-z]/ && $9 != "0" && $9 != "N/A" {bad++} END {print bad + 0}' "$logs/$c-$name-a.txt")
    if ((first == 0 && second == 0 && rows > 0 && wrong == 0)); then
      if grep -q "N/A (out of place)" "$logs/$c-$name-a.txt"; then
        na=$((na + 1))
        echo "not applicable across hosts: $c $name: $(grep -m1 'N/A (out of place)' "$logs/$c-$name-a.txt")"
      else
        passed=$((passed + 1))
        echo "right: $c $name ($rows sizes, $(grep -m1 'across hosts' "$logs/$c-$name-a.txt"))"
      fi
    else
      failed=$((failed + 1))
      echo "FAILED: $c $name (exit $first/$second, $wrong rows wrong)"
      grep -hv '^#' "$logs/$c-$name-a.txt" "$logs/$c-$name-b.txt" | tail -6
    fi
  done
done
((mps)) && echo quit | nvidia-cuda-mps-control
echo "across hosts on the GPU: $passed files right, $na not applicable, $failed failed"
((failed == 0))
