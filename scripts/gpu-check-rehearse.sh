#!/usr/bin/env bash
# `scripts/gpu-check.sh --rehearse [options]`: the device-side build as a lent GPU machine would
# run it, on a machine without a GPU. In a private mount namespace (root, util-linux's unshare and
# overlayfs needed; nothing outside the namespace changes):
#   - the files of the Debian packages Weft builds with (fmt, pugixml, CLI11, Catch2) are hidden,
#     so that only the carried build-deps/ can satisfy the build, as on the lent machines;
#   - the CUDA toolkit's NCCL (nccl*.h, libnccl*) is hidden, and NCCL is laid out as PyTorch's
#     nvidia-nccl wheel lays it out (nvidia/nccl/include, nvidia/nccl/lib/libnccl.so.2 only) in
#     build-rehearse/site-packages, which is put on the Python path;
# then gpu-check.sh runs with the remaining options: the build (the shim, weft-perf, the GPU
# tests), the host-side tests; the device steps are reported as skipped. Build folder:
# build-rehearse/build. Not part of CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rehearsal="$root/build-rehearse"
deps="$root/build-deps"
packages=(libfmt-dev libfmt9 libpugixml-dev libpugixml1v5 libcli11-dev catch2 libucx0 libucx-dev
          ucx-utils)

if [[ ${1:-} != --inside ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "gpu-check --rehearse: needs root, for a private mount namespace" >&2
    exit 2
  fi
  command -v unshare > /dev/null || { echo "gpu-check --rehearse: unshare (util-linux) is missing" >&2; exit 2; }
  [[ -d "$deps/usr" ]] || bash "$root/scripts/gpu-check.sh" --pack-deps "$deps"
  mkdir -p "$rehearsal"
  exec unshare --mount --propagation private bash "$0" --inside "$@"
fi
shift  # --inside

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
cuda_include=$(readlink -f "$cuda/include")
cuda_lib=$(readlink -f "$cuda/lib64")
nccl_real=$(readlink -f "$cuda_lib/libnccl.so.2" 2> /dev/null || true)
if [[ ! -f "$cuda_include/nccl.h" || ! -f "$nccl_real" ]]; then
  echo "gpu-check --rehearse: the CUDA toolkit in $cuda carries no NCCL to lay out as a wheel" >&2
  exit 1
fi

# Scratch space that vanishes with the namespace.
ns="$rehearsal/ns"
mkdir -p "$ns"
mount -t tmpfs tmpfs "$ns"

# ---- NCCL as the wheel lays it out ------------------------------------------------------------
wheel="$rehearsal/site-packages/nvidia/nccl"
rm -rf "$rehearsal/site-packages"
mkdir -p "$wheel/include" "$wheel/lib"
cp -a "$cuda_include"/nccl*.h "$wheel/include/"
[[ -d "$cuda_include/nccl_device" ]] && cp -a "$cuda_include/nccl_device" "$wheel/include/"
# The 200 MB library is bound in, not copied; the binding outlives the hiding below.
touch "$wheel/lib/libnccl.so.2"
mount --bind "$nccl_real" "$wheel/lib/libnccl.so.2"

# ---- what to hide: an overlay on /usr whose upper layer holds a whiteout for each file ---------
# (An overlay keeps every other path, `..` included, exactly where it was.)
hidden=()
for p in "${packages[@]}"; do
  while read -r f; do
    case "$f" in /usr/share/doc/*|/usr/share/man/*) continue ;; esac
    [[ -f "$f" || -L "$f" ]] && hidden+=("$(readlink -f "$(dirname "$f")")/$(basename "$f")")
  done < <(dpkg -L "$p")
done
for f in "$cuda_include"/nccl* "$cuda_lib"/libnccl*; do hidden+=("$f"); done
upper="$ns/upper"
mkdir -p "$upper" "$ns/work"
for f in "${hidden[@]}"; do
  case "$f" in /usr/*) ;; *) echo "gpu-check --rehearse: cannot hide $f (outside /usr)" >&2; exit 1 ;; esac
  mkdir -p "$upper$(dirname "${f#/usr}")"
  mknod "$upper${f#/usr}" c 0 0
done
mount -t overlay overlay -o "lowerdir=/usr,upperdir=$upper,workdir=$ns/work" /usr

visible=0
for f in "${hidden[@]}" "$cuda/include/nccl.h" "$cuda/lib64/libnccl.so.2"; do
  if [[ -e "$f" ]]; then echo "gpu-check --rehearse: still visible: $f"; visible=1; fi
done
((visible == 0)) || exit 1
echo "gpu-check --rehearse: hidden ${#hidden[@]} files of ${packages[*]} and the toolkit's NCCL; NCCL as a wheel in $rehearsal/site-packages"

unset NCCL_HOME
export PYTHONPATH="$rehearsal/site-packages${PYTHONPATH:+:$PYTHONPATH}"
export WEFT_GPU_CHECK_REHEARSAL=1
status=0
bash "$root/scripts/gpu-check.sh" --rehearse --build "$rehearsal/build" --deps "$deps" "$@" || status=$?
# Without a GPU every run of gpu-check ends with 77 at best: the rehearsal passed.
if ((status == 77)); then
  echo "gpu-check --rehearse: passed (the build and the host-side steps, without the Debian packages)"
  exit 0
fi
exit "$status"
