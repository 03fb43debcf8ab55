#!/usr/bin/env bash
# The proxy that carries calls across hosts (docs/architecture.md §6) beside UCX's own
# ucx_perftest, same machine, same transport, one run (docs/performance.md, "Across hosts").
#
#   scripts/bench-proxy.sh [TRANSPORT]     TRANSPORT: UCX_TLS for both, default tcp (over lo)
#
# Two processes stand for two hosts in each. ucx_perftest: one-way put latency of 8 bytes
# (ucp_put_lat) and put bandwidth (ucp_put_bw) at 1 MB and 4 MB. weft-proxy-bench: the same
# figures through the proxies (a message's trip from one kernel's slot to the other's, and a
# stream of messages of one slot each), and its time per message of 8 bytes when nothing else
# limits it (the proxies' cost per descriptor). Targets: latency at most 1.5× ucx_perftest's,
# bandwidth at least 90 % of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD_DIR:-$root/build}
transport=${1:-tcp}
bench=$build/runtime/tools/weft-proxy-bench/weft-proxy-bench
command -v ucx_perftest >/dev/null || { echo "bench-proxy: ucx_perftest not found (Debian: ucx-utils; scripts/install-deps.sh)" >&2; exit 2; }
[ -x "$bench" ] || { echo "bench-proxy: build weft-proxy-bench first (scripts/build.sh)" >&2; exit 2; }
export UCX_TLS=$transport
[ "$transport" = tcp ] && export UCX_NET_DEVICES=lo

port=$((20000 + RANDOM % 20000))
# ucx_perftest TEST SIZE ITERS: the server in the background, the client's "Final:" line.
perftest() {
  local test=$1 size=$2 iters=$3
  port=$((port + 1))
  ucx_perftest -p "$port" >/dev/null 2>&1 &
  local server=$!
  sleep 0.5
  ucx_perftest 127.0.0.1 -p "$port" -t "$test" -s "$size" -n "$iters" 2>/dev/null | grep '^Final:'
  wait "$server" 2>/dev/null || true
}
# Final: iterations, latency typical, average, overall (us), bandwidth average, overall (MB/s), ...
lat_line=$(perftest ucp_put_lat 8 20000)
bw1_line=$(perftest ucp_put_bw 1048576 1000)
bw4_line=$(perftest ucp_put_bw 4194304 250)
ucx_lat=$(awk '{print $4}' <<<"$lat_line")
ucx_bw1=$(awk '{print $7}' <<<"$bw1_line")
ucx_bw4=$(awk '{print $7}' <<<"$bw4_line")

weft=$("$bench" --latency 20000 --sizes 1M,4M --stream 20000)
weft_lat=$(awk '$1 == "latency" {print $5}' <<<"$weft")
weft_bw1=$(awk '$1 == "bandwidth" && $2 == 1048576 {print $6}' <<<"$weft")
weft_bw4=$(awk '$1 == "bandwidth" && $2 == 4194304 {print $6}' <<<"$weft")
weft_desc=$(awk '$1 == "descriptor" {print $5}' <<<"$weft")

echo "$weft" | head -1
echo "# ucx_perftest: UCX $(ucx_info -v | awk '/Version/ {print $3}'), UCX_TLS=$UCX_TLS; $(nproc) cores"
printf '| figure | ucx_perftest | the proxy | ratio | target |\n|---|---|---|---|---|\n'
printf '| one-way latency, 8 B | %.2f us | %.2f us | %.2f× | ≤ 1.5× |\n' "$ucx_lat" "$weft_lat" \
  "$(echo "$weft_lat / $ucx_lat" | bc -l)"
printf '| bandwidth, 1 MB | %.1f MB/s | %.1f MB/s | %.0f %% | ≥ 90 %% |\n' "$ucx_bw1" "$weft_bw1" \
  "$(echo "100 * $weft_bw1 / $ucx_bw1" | bc -l)"
printf '| bandwidth, 4 MB | %.1f MB/s | %.1f MB/s | %.0f %% | ≥ 90 %% |\n' "$ucx_bw4" "$weft_bw4" \
  "$(echo "100 * $weft_bw4 / $ucx_bw4" | bc -l)"
printf '| per message of 8 B, 64 in flight | - | %.2f us | - | - |\n' "$weft_desc"
