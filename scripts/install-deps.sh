#!/usr/bin/env bash
# Installs what Weft builds with, from Debian's packages. Safe to run again: apt-get skips what is
# already there, and the package lists are refreshed only when a package is missing.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config git
          libpugixml-dev libfmt-dev libcli11-dev catch2
          clang libclang-rt-14-dev time)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  echo "install-deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# CUDA is optional: the toolkit (with NCCL in its prefix) is not a Debian package here.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: CUDA toolkit found ($(command -v nvcc || echo /usr/local/cuda/bin/nvcc))"
else
  echo "install-deps: no CUDA toolkit; the CPU-only parts will be built"
fi
