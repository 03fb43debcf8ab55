#!/usr/bin/env bash
# Installs what Weft builds with, from Debian's packages. Safe to run again: apt-get skips what is
# already there, and the package lists are refreshed only when a package is missing.
#
#   install-deps.sh           everything: the build, the tests, the sanitizer and fuzz builds, the
#                             Python bindings (msccl-tools' MSCCLang programs run through them)
#   install-deps.sh --build   only what building weftc and weft-perf needs (scripts/demo.sh)
set -euo pipefail

# libucx-dev: UCX, the network engine of the proxy that runs algorithms across hosts
# (docs/architecture.md §6); ucx-utils: ucx_perftest, the proxy benchmark's reference;
# universal-ctags: the function lengths scripts/check-function-length.sh checks (a test).
packages=(build-essential cmake ninja-build pkg-config
          libpugixml-dev libfmt-dev libcli11-dev catch2 liblemon-dev libssl-dev libucx-dev)
case "${1:-}" in
  --build) ;;
  "") packages+=(git clang libclang-rt-14-dev time pybind11-dev python3-dev ucx-utils bc
              universal-ctags) ;;
  *) echo "install-deps: unknown argument '$1' (use --build or nothing)" >&2; exit 2 ;;
esac

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
