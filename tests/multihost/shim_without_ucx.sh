#!/usr/bin/env bash
# The shim across hosts on a machine without UCX (WEFT_UCX_LIB naming a library that is not
# there): each process says once what is missing, and the calls are not Weft's (standalone mode
# has no NCCL to hand them to, so they fail with ncclInvalidUsage and the reason).
#
#   shim_without_ucx.sh WEFTC LIBWEFT_NCCL PROGRAM
set -uo pipefail
weftc=$1 shim=$2 program=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$weftc" compile allreduce_hierarchical --nodes 2 --gpus-per-node 2 -o "$work/hier.xml" >/dev/null || exit 1
WEFT_STANDALONE=1 WEFT_DEVICE=host WEFT_DEBUG=WARN WEFT_ALGO_DIR="$work" \
  WEFT_UCX_LIB=/nonexistent/libucp.so.0 LD_PRELOAD="$shim" \
  "$program" -n 4 -p 2 -c allreduce -i -b 1K -e 1K >"$work/run.log" 2>&1
code=$?
missing=$(grep -c "WEFT WARN .*UCX is not installed here" "$work/run.log")
grep -m2 "WEFT WARN" "$work/run.log"
echo "exit $code; warnings naming the missing UCX: $missing"
# One per process (4), and the application told the calls cannot run.
if ((code != 0 && missing == 4)) && grep -q "ncclInvalidUsage\|invalid usage" "$work/run.log"; then
  echo "without UCX: one warning per process, no call on Weft"
else
  echo "FAILED"
  cat "$work/run.log" | head -30
fi
