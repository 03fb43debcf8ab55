#!/usr/bin/env bash
# The GPU check: one command for a machine with an NVIDIA GPU. Builds Weft with CUDA for the GPU
# it finds, runs the GPU tests (ctest label `gpu`) and the host-side GPU-runtime tests, checks
# weft-perf against the CPU reference over built-in algorithms and the MSCCL XML corpus, runs the
# benchmark sweeps the GPU-runtime issue asks for, and writes everything to a log.
#
#   scripts/gpu-check.sh [--deps DIR] [--build DIR] [--log FILE] [--quick] [--steps LIST]
#
# --steps picks what runs after the (incremental) build, comma-separated, by default all of
# tests,check,library,corpus,bench,multi,nccl — so that the check can be split over several calls of a few
# minutes each on a machine lent with a per-command time limit; the build folder is reused.
# --quick shrinks the correctness sweep to 8 ranks and the benchmarks to 64 MB.
#
# What the machine needs: cmake (3.25+), ninja, nvcc (CUDA 12/13) with a host C++20 compiler, and
# the libraries Weft builds with: fmt 9, pugixml, CLI11 2, Catch2 2. The lent GPU machines have
# the tools but none of those libraries (no Debian packages, no network). So, on the development
# machine (where the Debian packages are installed) first run
#
#   scripts/gpu-check.sh --pack-deps build-deps
#
# which copies those packages' headers, libraries and CMake files into build-deps/ (ignored by git,
# like every /build*/ folder, so it must be carried to the GPU machine explicitly). This script
# then finds build-deps/ next to the sources (or takes --deps DIR) and builds from source there,
# with the GPU's own architecture. Nothing is downloaded.
#
# Exit status: 0 when every step passed; 1 otherwise (the log says which). Timed targets from the
# issue (≥ 70 % of the device-memory floor at ≥ 64 MB in Simple; ≤ 10 µs per 1 KB all-pairs LL
# call with CUDA graphs) are reported as PASS/MISS lines, and do not change the exit status.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-gpu"
deps=""
log=""
quick=0
pack=""
steps="tests,check,library,corpus,bench,multi,nccl"

while (($#)); do
  case "$1" in
    --deps) deps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --steps) steps=$2; shift 2 ;;
    --pack-deps) pack=$2; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# ---- --pack-deps: collect the Debian packages' files for carrying ------------------------------
if [[ -n "$pack" ]]; then
  mkdir -p "$pack"
  for p in libfmt-dev libfmt9 libpugixml-dev libpugixml1v5 libcli11-dev catch2; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "gpu-check: package $p is not installed (scripts/install-deps.sh installs it)" >&2
      exit 1
    fi
    dpkg -L "$p" | while read -r f; do
      [[ -f "$f" || -L "$f" ]] || continue
      case "$f" in /usr/share/doc/*|/usr/share/man/*) continue ;; esac
      mkdir -p "$pack$(dirname "$f")"
      cp -a "$f" "$pack$f"
    done
  done
  echo "gpu-check: packed $(du -sh "$pack" | cut -f1) of headers, libraries and CMake files into $pack"
  exit 0
fi

# ---- logging ------------------------------------------------------------------------------------
mkdir -p "$build"
[[ -n "$log" ]] || log="$build/gpu-check-$(date +%Y%m%d-%H%M%S).log"
exec > >(tee -a "$log") 2>&1
failures=()
step() { echo; echo "==== $* ($(date +%T))"; }
wanted() { [[ ",$steps," == *",$1,"* ]]; }
fail() { failures+=("$1"); echo "!!!! FAILED: $1"; }

step "machine"
uname -a
nvidia-smi || { echo "gpu-check: nvidia-smi failed: no usable GPU here" ; exit 1; }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" --version | tail -2
cmake --version | head -1
ninja --version
jobs=$(nproc 2>/dev/null || echo 8)

# ---- dependencies -------------------------------------------------------------------------------
[[ -n "$deps" ]] || { [[ -d "$root/build-deps/usr" ]] && deps="$root/build-deps"; }
cmake_deps=()
if [[ -n "$deps" ]]; then
  deps=$(cd "$deps" && pwd)
  prefix="$deps/usr"
  libdir="$prefix/lib/x86_64-linux-gnu"
  cmake_deps=(-DCMAKE_PREFIX_PATH="$prefix"
              -Dfmt_DIR="$libdir/cmake/fmt" -Dpugixml_DIR="$libdir/cmake/pugixml"
              -DCLI11_DIR="$prefix/share/cmake/CLI11" -DCatch2_DIR="$prefix/lib/cmake/Catch2")
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "gpu-check: using carried dependencies in $deps"
else
  echo "gpu-check: no build-deps/ found; relying on system fmt, pugixml, CLI11 and Catch2"
fi

# The architecture of the first GPU ("9.0" → 90), unless WEFT_CUDA_ARCHS says otherwise.
archs=${WEFT_CUDA_ARCHS:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')}
echo "gpu-check: building for CUDA architecture $archs"

# The NCCL example (the nccl step) links the real libnccl. The lent machines' CUDA prefix has no
# NCCL; their PyTorch wheel (nvidia-nccl-*) does, as libnccl.so.2 only, which find_library does
# not match: point CMake at it and let the example find it at run time.
cuda_prefix=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
if ! ls "$cuda_prefix"/lib64/libnccl.so "$cuda_prefix"/lib/libnccl.so >/dev/null 2>&1; then
  for sp in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    nccl_lib=$(find "$sp" -path '*nvidia*' -name 'libnccl.so*' 2>/dev/null | head -1)
    nccl_inc=$(find "$sp" -path '*nvidia*' -name nccl.h 2>/dev/null | head -1)
    if [[ -n "$nccl_lib" && -n "$nccl_inc" ]]; then
      cmake_deps+=(-DWEFT_EXAMPLE_NCCL_LIBRARY="$nccl_lib"
                   -DWEFT_EXAMPLE_NCCL_INCLUDE="$(dirname "$nccl_inc")")
      export LD_LIBRARY_PATH="$(dirname "$nccl_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "gpu-check: no libnccl in $cuda_prefix; using $nccl_lib"
      break
    fi
  done
fi

# ---- build --------------------------------------------------------------------------------------
step "configure"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_ENABLE_CUDA=ON \
  -DWEFT_WERROR=ON -DWEFT_CUDA_ARCHS="$archs" "${cmake_deps[@]}" || { fail "configure"; exit 1; }

step "build the CUDA runtime (timed)"
start=$(date +%s)
cmake --build "$build" -j "$jobs" --target weft_gpu || { fail "build weft_gpu"; exit 1; }
echo "gpu-check: weft_gpu built in $(( $(date +%s) - start )) s with -j $jobs"

step "build tests and weft-perf"
cmake --build "$build" -j "$jobs" --target weft_gpu_tests weft_gpu_host_tests weft-perf ||
  { fail "build tests and weft-perf"; exit 1; }
perf="$build/runtime/src/gpu/weft-perf/weft-perf"

# ---- tests --------------------------------------------------------------------------------------
if wanted tests; then
step "host-side GPU-runtime tests"
(cd "$build" && ctest -R '^gpu_host: ' --output-on-failure) || fail "gpu_host tests"

step "GPU tests (label gpu)"
# A per-test limit well inside one device call; WEFT_GPU_TESTS (a ctest -R regex) runs a subset,
# so the label can be split over several calls when the whole exceeds one.
(cd "$build" && ctest -L gpu -R "${WEFT_GPU_TESTS:-.}" --output-on-failure \
  --timeout "${WEFT_GPU_TEST_TIMEOUT:-300}") || fail "gpu tests"
fi

# ---- weft-perf: correctness sweeps against the CPU reference ------------------------------------
run_perf() {  # name, arguments...
  local name=$1; shift
  echo "---- weft-perf $*"
  if ! "$perf" "$@"; then fail "weft-perf $name"; fi
}

if wanted check; then
step "weft-perf correctness: built-in algorithms, every protocol, 2/4/8 ranks"
ranks_list="2 4 8"; ((quick)) && ranks_list="8"
for n in $ranks_list; do
  for proto in Simple LL LL128; do
    for alg in ring ring:2 allpairs allpairs-chain allgather-ring; do
      for dtype in float int32; do
        # 64 MB at 8 ranks; smaller at 2 and 4, where the CPU reference dominates the time.
        top=64M; ((n < 8)) && top=16M
        run_perf "check $alg $proto $n $dtype" --builtin "$alg" --proto "$proto" --ranks "$n" \
          -b 4 -e $top -f 64 -n 3 -w 1 -c 1 -d "$dtype"
      done
    done
  done
done

fi

if wanted library; then
step "weft-perf correctness: the compiler's algorithm library (weftc compile) at 2/4/8 ranks"
# Best effort: the library comes from the compiler; without a working weftc the MSCCL corpus below
# stands in for it.
if cmake --build "$build" -j "$jobs" --target weftc > "$build/weftc-build.log" 2>&1 &&
   "$build/compiler/weftc" list > "$build/weftc-list.txt" 2>&1; then
  mkdir -p "$build/library"
  while read -r name coll rest; do
    [[ -n "$name" ]] || continue
    for n in 2 4 8; do
      shape=(--ranks "$n")
      [[ "$rest" == --nodes* ]] && { ((n >= 4)) || continue; shape=(--nodes 2 --gpus-per-node $((n / 2))); }
      for proto in Simple LL LL128; do
        xml="$build/library/$name-$n-$proto.xml"
        if ! "$build/compiler/weftc" compile "$name" "${shape[@]}" --proto "$proto" -o "$xml" \
             > "$xml.log" 2>&1; then
          echo "gpu-check: weftc compile $name ${shape[*]} --proto $proto did not produce XML (see $xml.log)"
          continue
        fi
        run_perf "library $name $n $proto" --xml "$xml" --ranks "$n" -b 4 -e 16M -f 64 -n 3 -w 1 -c 1
      done
    done
  done < <(tail -n +2 "$build/weftc-list.txt")
else
  echo "gpu-check: weftc did not build or list its library (see $build/weftc-build.log); skipped"
fi
fi

if wanted corpus; then
step "weft-perf correctness: MSCCL XML corpus"
corpus="$root/../shared/msccl-xml"
if [[ -d "$corpus" ]]; then
  while IFS= read -r xml; do
    n=$(grep -o 'ngpus="[0-9]*"' "$xml" | head -1 | tr -dc 0-9)
    [[ -n "$n" && "$n" -le 64 ]] || continue
    run_perf "check $(basename "$xml")" --xml "$xml" --ranks "$n" -b 1K -e 16M -f 32 -n 3 -w 1 -c 1
  done < <(find "$corpus" -name '*.xml' | sort)
else
  echo "gpu-check: no MSCCL XML corpus at $corpus; skipped"
fi
fi

# ---- benchmarks ---------------------------------------------------------------------------------
if wanted bench; then
step "benchmarks: 8 emulated ranks, 1 KB to 256 MB"
bench() {  # name, arguments...
  local name=$1; shift
  local out="$build/bench-$name.txt"
  echo "---- weft-perf $*"
  if "$perf" "$@" | tee "$out"; then :; else fail "bench $name"; fi
}
max=256M; ((quick)) && max=64M
bench ring-simple --builtin ring --ranks 8 --proto Simple -b 1K -e $max -f 2 -n 20 -w 5 -c 0
bench ring8-simple --builtin ring:8 --ranks 8 --proto Simple -b 1K -e $max -f 2 -n 20 -w 5 -c 0
bench allpairs-simple --builtin allpairs --ranks 8 --proto Simple -b 1K -e $max -f 2 -n 20 -w 5 -c 0
bench allpairs-ll-graph --builtin allpairs --ranks 8 --proto LL -b 1K -e 1M -f 2 -n 20 -w 5 -c 1 -G 100
bench ring-ll128 --builtin ring:4 --ranks 8 --proto LL128 -b 1K -e 16M -f 4 -n 20 -w 5 -c 0

step "targets"
# Row fields: 1 size, 6-10 out-of-place (time us, algbw, busbw, #wrong, % of copy bandwidth),
# 11-15 the same in place, 16 device bytes.
for name in ring-simple ring8-simple allpairs-simple; do
  awk -v name="$name" '!/^#/ && NF >= 16 && $1 >= 64*1024*1024 {
      best = ($15 > $10) ? $15 : $10;
      verdict = (best >= 70) ? "PASS" : "MISS";
      printf "%s %s: %d bytes at %.1f %% (out of place) / %.1f %% (in place) of the device-memory floor (target >= 70 %%)\n", verdict, name, $1, $10, $15 }' \
    "$build/bench-$name.txt"
done
awk '!/^#/ && NF >= 16 && $1 == 1024 {
    best = ($11 < $6) ? $11 : $6;
    verdict = (best <= 10) ? "PASS" : "MISS";
    printf "%s allpairs LL 1 KB with CUDA graphs: %.2f us out of place, %.2f us in place per call (target <= 10 us)\n", verdict, $6, $11 }' \
  "$build/bench-allpairs-ll-graph.txt"
fi

# ---- multi-process (CUDA IPC), when there are GPUs for it ---------------------------------------
gpus=$(nvidia-smi --list-gpus | wc -l)
if ! wanted multi; then
  :
elif ((gpus >= 2)); then
  step "multi-process: $gpus processes, one GPU each, CUDA IPC"
  port=$((20000 + RANDOM % 20000))
  pids=()
  for ((r = 0; r < gpus; r++)); do
    "$perf" --builtin ring --proto Simple --rank $r --nranks "$gpus" --rendezvous "127.0.0.1:$port" \
      --device $r -b 1K -e 64M -f 8 -n 10 -w 2 -c 1 > "$build/multiprocess-$r.txt" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < gpus; r++)); do
    wait "${pids[$r]}" || fail "multi-process rank $r"
  done
  cat "$build/multiprocess-0.txt"
else
  step "multi-process: skipped (one GPU; several processes on one GPU would need MPS)"
fi

# ---- the NCCL shim: real NCCL at one rank, standalone mode at 2, 4, 8 processes ----------------
if wanted nccl; then
  step "NCCL shim (scripts/gpu-check-nccl.sh)"
  WEFT_GPU_CHECK_LOGS="$build/nccl-check" bash "$root/scripts/gpu-check-nccl.sh" "$build" ||
    fail "NCCL shim check"
fi

step "summary"
echo "log: $log"
if ((${#failures[@]})); then
  printf 'FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "gpu-check: every step passed"
