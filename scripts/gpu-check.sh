#!/usr/bin/env bash
# The GPU check: one command for a machine with an NVIDIA GPU (docs/gpu.md has the plan for a
# lent machine). Builds Weft with CUDA for the GPU it finds, then runs the steps asked for:
#
#   tests    the host-side GPU-runtime tests, then the GPU tests (ctest label `gpu`)
#   check    weft-perf against the CPU reference: built-in algorithms × protocols × ranks × types
#   corpus   weft-perf against the CPU reference: every file of the MSCCL XML corpus
#   library  weft-perf against the CPU reference: the compiler's library (weftc compile)
#   synth    weft-perf against the CPU reference: what `weftc synthesize -t h100-nvswitch` writes
#            for 8 ranks (every band's file and every proved sketch, each collective), and the
#            chosen files' timings beside the built-in all-pairs (a sanity run: 8 ranks emulated
#            on one GPU share its memory, so the times are not the prediction's)
#   bench    the benchmark sweeps and the timed targets (PASS/MISS lines)
#   latency  the step-latency benchmark (weft-latency): the ping-pong floor beside Weft's time
#            per step on chains of 1, 8 and 64 steps, every protocol and step variant, one run
#   multi    one process per GPU over CUDA IPC (needs 2 or more GPUs)
#   nccl     the NCCL shim: real NCCL at one rank, standalone mode on the GPU (gpu-check-nccl.sh)
#   hosts    across hosts on the one GPU (gpu-check-hosts.sh): a probe of what the machine offers
#            (NCCL_HOSTID, GPUDirect RDMA, RDMA devices), then two processes as two hosts, four
#            emulated ranks each, UCX over loopback TCP: the synthesized two-node algorithms
#   torch    PyTorch under the shim (gpu-check-torch.sh): needs python3 with torch and a GPU
#
# tests, check, corpus, library, synth and bench run once per step variant of --variants (WEFT_STEP,
# docs/performance.md), one after the other, so that their figures and #wrong columns sit side
# by side; every file and summary line names its variant.
#
#   scripts/gpu-check.sh [--steps LIST] [--quick] [--out DIR] [--corpus DIR] [--deps DIR]
#                        [--build DIR] [--jobs N] [--budget SECONDS] [--test-timeout SECONDS]
#                        [--variants lean,overlap,overlap:4,full]
#   scripts/gpu-check.sh --pack-deps DIR     (on the development machine; see below)
#   scripts/gpu-check.sh --rehearse [...]    (the device-side build and host steps, no GPU needed)
#
# --steps      comma-separated, default tests,check,corpus,library,synth,bench,latency,multi,nccl,
#              hosts,torch;
#              only the targets those steps need are built
# --variants   the step variants (full, lean, overlap; overlap:N with Simple's messages in N
#              slices, WEFT_SIMPLE_SLICES) the per-variant steps run under, in this order (default
#              lean,overlap,overlap:4,full: the default step first, so that a budget cut leaves
#              it run)
# --quick      every step smaller: 8 ranks only, sizes to 16 MB (1 MB for corpus and library),
#              benchmarks to 64 MB, the shim at 1, 2 and 4 processes
# --out DIR    where the results go (default: $OUT when set, else BUILD/gpu-check-out): at most
#              four files, gpu-check.log (everything printed, written as it goes), summary.txt
#              (one line per step and target), tables.txt (the benchmark tables) and
#              artifacts.tar.gz (CTest and NCCL logs, CMakeCache.txt, every weft-perf output)
# --corpus DIR the MSCCL XML files (default: DEPS/msccl-xml, else ../shared/msccl-xml)
# --budget S   start no step once S seconds have passed since the start (default 540, which
#              leaves a 10-minute call time to pack the results); 0: no budget
# --test-timeout S  the limit of one CTest test (default 120)
# WEFT_WERROR=OFF   build without warnings as errors (a lent machine's compiler may warn where
#                   CI's does not; CI keeps them errors)
#
# Without a GPU (or with --rehearse) the build and the host-side steps run, and the steps that
# need a device are reported as skipped.
#
# The lent GPU machines have cmake, ninja and nvcc but none of the libraries Weft builds with
# (fmt, pugixml, CLI11, Catch2: Debian packages), and no network. On the development machine run
#
#   scripts/gpu-check.sh --pack-deps build-deps
#
# which copies those packages' headers, libraries and CMake files into build-deps/, and the MSCCL
# XML corpus (../shared/msccl-xml) into build-deps/msccl-xml when it is there. build-deps/ is
# ignored by git, like every /build*/ folder, so it must be carried explicitly; it is found next
# to the sources (or given by --deps). NCCL comes from WEFT_NCCL_HOME, NCCL_HOME, the CUDA
# toolkit or the Python wheel nvidia-nccl-* (cmake/WeftNccl.cmake).
#
# --rehearse runs the device-side build in a private mount namespace (root, util-linux unshare)
# in which the Debian development packages and the CUDA toolkit's NCCL are hidden and NCCL is
# laid out as the nvidia-nccl wheel lays it out, on the Python path; then the host-side steps.
# It checks a change to the GPU path without a GPU; build folder build-rehearse/build.
#
# Exit status: 0 when every step asked for ran and passed; 1 when a step failed; 77 when no GPU
# was found (the host-side steps passed, the device steps were skipped); 2 for bad arguments.
# Timed targets are reported as PASS/MISS lines and do not change the exit status.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=""
deps=""
out=${OUT:-}
corpus=""
quick=0
pack=""
rehearse=0
steps="tests,check,corpus,library,synth,bench,latency,multi,nccl,hosts,torch"
variants="lean,overlap,overlap:4,full"
jobs=$(nproc 2>/dev/null || echo 8)
budget=540
test_timeout=${WEFT_GPU_TEST_TIMEOUT:-120}
forward=()  # the arguments, for --rehearse to hand on

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
need_value() { [[ $# -ge 2 && -n $2 ]] || { echo "gpu-check: $1 needs a value (see --help)" >&2; exit 2; }; }
while (($#)); do
  case "$1" in
    --deps) need_value "$@"; deps=$2; forward+=("$1" "$2"); shift 2 ;;
    --build) need_value "$@"; build=$2; forward+=("$1" "$2"); shift 2 ;;
    --out) need_value "$@"; out=$2; forward+=("$1" "$2"); shift 2 ;;
    --corpus) need_value "$@"; corpus=$2; forward+=("$1" "$2"); shift 2 ;;
    --steps) need_value "$@"; steps=$2; forward+=("$1" "$2"); shift 2 ;;
    --variants) need_value "$@"; variants=$2; forward+=("$1" "$2"); shift 2 ;;
    --jobs) need_value "$@"; jobs=$2; forward+=("$1" "$2"); shift 2 ;;
    --budget) need_value "$@"; budget=$2; forward+=("$1" "$2"); shift 2 ;;
    --test-timeout) need_value "$@"; test_timeout=$2; forward+=("$1" "$2"); shift 2 ;;
    --quick) quick=1; forward+=("$1"); shift ;;
    --pack-deps) need_value "$@"; pack=$2; shift 2 ;;
    --rehearse) rehearse=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for s in ${steps//,/ }; do
  case "$s" in tests|check|corpus|library|synth|bench|latency|multi|nccl|hosts|torch) ;;
    *) echo "gpu-check: unknown step '$s' in --steps (see --help)" >&2; exit 2 ;;
  esac
done
for v in ${variants//,/ }; do
  case "$v" in full|lean|overlap|overlap:[1-9]|overlap:1[0-6]) ;;
    *) echo "gpu-check: unknown step variant '$v' in --variants (full, lean, overlap, or" \
         "overlap:N for Simple's messages in N slices, 1 to 16)" >&2; exit 2 ;;
  esac
done
# The step variants alone, each once, for the latency benchmark (slices move big messages only).
latency_variants=$(tr ',' '\n' <<<"$variants" | cut -d: -f1 | awk '!seen[$0]++' | paste -sd, -)
for v in "$jobs" "$budget" "$test_timeout"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "gpu-check: '$v' is not a whole number of jobs or seconds" >&2; exit 2; }
done

# ---- --pack-deps: collect the Debian packages' files (and the corpus) for carrying -------------
if [[ -n "$pack" ]]; then
  mkdir -p "$pack"
  for p in libfmt-dev libfmt9 libpugixml-dev libpugixml1v5 libcli11-dev catch2 libssl-dev libssl3 \
      liblemon-dev libucx0 libucx-dev ucx-utils libnuma1 librdmacm1 libibverbs1; do
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
  if [[ -d "$root/../shared/msccl-xml" ]]; then
    rm -rf "$pack/msccl-xml"
    cp -a "$root/../shared/msccl-xml" "$pack/msccl-xml"
    echo "gpu-check: copied the MSCCL XML corpus ($(find "$pack/msccl-xml" -name '*.xml' | wc -l) files) into $pack/msccl-xml"
  else
    echo "gpu-check: no MSCCL XML corpus at ../shared/msccl-xml; the corpus step will skip"
  fi
  echo "gpu-check: packed $(du -sh "$pack" | cut -f1) into $pack"
  exit 0
fi

# ---- --rehearse: the same run inside a namespace without the Debian packages -------------------
if ((rehearse)) && [[ -z ${WEFT_GPU_CHECK_REHEARSAL:-} ]]; then
  exec bash "$root/scripts/gpu-check-rehearse.sh" "${forward[@]}"
fi

# ---- output: the log as it goes, a summary, tables, one archive ---------------------------------
[[ -n "$build" ]] || build="$root/build-gpu"
mkdir -p "$build"
build=$(cd "$build" && pwd)
[[ -n "$out" ]] || out="$build/gpu-check-out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$build/gpu-check-work"  # everything that goes into the archive
rm -rf "$work"
mkdir -p "$work"
log="$out/gpu-check.log"
summary="$out/summary.txt"
tables="$out/tables.txt"
: > "$log"
: > "$summary"
: > "$tables"
exec > >(tee -a "$log") 2>&1
started=$(date +%s)
failures=()
skipped=()
unfit=()  # weft-perf runs whose launch needs more threadblocks than one GPU holds

note() { echo "$*" | tee -a "$summary" > /dev/null; echo "gpu-check: $*"; }
step() { echo; echo "==== $* ($(date +%T), $(( $(date +%s) - started )) s in)"; }
wanted() { [[ ",$steps," == *",$1,"* ]]; }
fail() { failures+=("$1"); echo "!!!! FAILED: $1"; echo "FAIL $1" >> "$summary"; }
over_budget() { ((budget > 0 && $(date +%s) - started >= budget)); }
# Whether step $1 runs: wanted, and not past the budget.
begin() {
  wanted "$1" || return 1
  if over_budget; then
    skipped+=("$1 (time budget)")
    echo "SKIP $1: the budget of $budget s is spent" >> "$summary"
    echo "gpu-check: step $1 skipped, the budget of $budget s is spent"
    return 1
  fi
  step_started=$(date +%s)
  return 0
}
end() { echo "DONE $1 in $(( $(date +%s) - step_started )) s" >> "$summary"; }

finish() {
  local status=$1
  step "summary"
  ((${#skipped[@]})) && printf 'skipped: %s\n' "${skipped[@]}"
  ((${#unfit[@]})) && printf 'not resident on one GPU (each rank needs its own): %s\n' "${unfit[@]}"
  ((${#failures[@]})) && printf 'FAILED: %s\n' "${failures[@]}"
  [[ -f "$build/CMakeCache.txt" ]] && cp "$build/CMakeCache.txt" "$work/"
  if [[ -d "$build/Testing/Temporary" ]]; then
    mkdir -p "$work/ctest" && cp "$build"/Testing/Temporary/*.log "$work/ctest/" 2>/dev/null
  fi
  echo "total $(( $(date +%s) - started )) s; results in $out: $(cd "$out" && echo *)"
  # The archive last, so that it holds the whole log too.
  cp "$log" "$work/"
  tar -czf "$out/artifacts.tar.gz" -C "$build" "$(basename "$work")" 2>/dev/null ||
    echo "gpu-check: could not write $out/artifacts.tar.gz"
  exit "$status"
}

step "machine"
uname -a
gpu=1
if ((rehearse)); then
  gpu=0
  echo "gpu-check: rehearsal: the device steps are skipped"
elif ! command -v nvidia-smi > /dev/null || ! nvidia-smi; then
  gpu=0
  echo "gpu-check: no usable GPU (nvidia-smi failed or is missing): building and running the host-side steps only"
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" --version | tail -2
cmake --version | head -1
echo "ninja $(ninja --version)"
echo "gpu-check: steps $steps; step variants $variants; quick $quick; $jobs jobs; budget ${budget} s; per-test limit ${test_timeout} s"
echo "gpu-check: results in $out"

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
  # UCX's transports are modules of their own, found here (and its tools on PATH).
  [[ -d "$libdir/ucx" ]] && export UCX_MODULE_DIR="$libdir/ucx"
  [[ -d "$prefix/bin" ]] && export PATH="$prefix/bin:$PATH"
  echo "gpu-check: using carried dependencies in $deps"
else
  echo "gpu-check: no build-deps/ found; relying on system fmt, pugixml, CLI11 and Catch2"
fi
if [[ -z "$corpus" ]]; then
  for c in ${deps:+"$deps/msccl-xml"} "$root/../shared/msccl-xml"; do
    [[ -d "$c" ]] && { corpus=$c; break; }
  done
fi

# The architecture of the first GPU ("9.0" → 90), unless WEFT_CUDA_ARCHS says otherwise.
archs=${WEFT_CUDA_ARCHS:-}
if [[ -z "$archs" ]] && ((gpu)); then
  archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
fi
archs=${archs:-90}
echo "gpu-check: building for CUDA architecture $archs"

# ---- build: configure, then only the targets the wanted steps need -----------------------------
step "configure"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_ENABLE_CUDA=ON \
  -DWEFT_WERROR="${WEFT_WERROR:-ON}" -DWEFT_CUDA_ARCHS="$archs" "${cmake_deps[@]}" > "$work/configure.log" 2>&1
configured=$?
grep -E "^-- Weft" "$work/configure.log"
((configured == 0)) || { tail -30 "$work/configure.log"; fail "configure"; finish 1; }
have_target() { ninja -C "$build" -t query "$1" > /dev/null 2>&1; }
# The NCCL runtime library for the shim's check and the example (a wheel's is not on any path).
nccl_library=$(sed -n 's/^-- Weft: NCCL .* from .*, \(\/.*libnccl[^ ]*\)$/\1/p' "$work/configure.log")
[[ -n "$nccl_library" ]] &&
  export LD_LIBRARY_PATH="$(dirname "$nccl_library")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

targets=(weft_gpu)
wanted tests && targets+=(weft_gpu_tests weft_gpu_host_tests)
for s in check corpus library synth bench multi hosts; do wanted $s && targets+=(weft-perf); done
wanted hosts && targets+=(weftc)
wanted latency && targets+=(weft-latency)
wanted library && targets+=(weftc)
wanted synth && targets+=(weftc)
wanted nccl && targets+=(weftc)
wanted torch && targets+=(weftc)
if wanted nccl || wanted torch; then
  for t in weft_nccl weft-nccl-example weft-example-algorithms; do
    if have_target "$t"; then targets+=("$t"); else
      echo "gpu-check: target $t is not configured (see the NCCL line above); the nccl step will fail"
    fi
  done
fi
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | awk '!seen[$0]++')
step "build ${targets[*]} (-j $jobs)"
build_started=$(date +%s)
if ! cmake --build "$build" -j "$jobs" --target "${targets[@]}" > "$work/build.log" 2>&1; then
  grep -E "error|FAILED" "$work/build.log" | head -40
  fail "build"
  finish 1
fi
note "DONE build of ${targets[*]} in $(( $(date +%s) - build_started )) s with -j $jobs"
perf="$build/runtime/tools/weft-perf/weft-perf"

device_step() {  # name: false (and a note) without a GPU
  if ((gpu)); then return 0; fi
  skipped+=("$1 (no GPU)")
  echo "SKIP $1: no GPU" >> "$summary"
  echo "gpu-check: $1 needs a GPU; skipped"
  return 1
}

# ---- the step-latency benchmark: the floor beside Weft per step, every variant in one run -------
if begin latency && device_step latency; then
  step "step latency (weft-latency), variants $latency_variants"
  latency_file="$work/latency.txt"
  if timeout 300 "$build/runtime/tools/weft-latency/weft-latency" --variants "$latency_variants" \
      > "$latency_file" 2>&1; then :; else fail "weft-latency"; fi
  cat "$latency_file"
  { echo "## step latency: weft-latency --variants $latency_variants"; cat "$latency_file"; echo; } >> "$tables"
  # Target: a step (the marginal cost per hop of the longest chain) at most 2x the floor.
  awk '/^  (full|lean|overlap) / && $6 != "-" && $3 == 64 {
      verdict = ($7 <= 2) ? "PASS" : "MISS";
      printf "%s step latency [%s] %s: %.3f us a step, %.2fx the ping-pong floor (target <= 2x)\n", verdict, $1, $2, $6, $7 }' \
    "$latency_file" | tee -a "$summary"
  end latency
fi

# ---- the steps that run once per step variant (WEFT_STEP) -------------------------------------
perf_runs=0
perf_failed=0
perf_unfit=0
perf_unchecked=0
perf_cells=0
perf_beyond=0
first_variant=${variants%%,*}
for variant in ${variants//,/ }; do
export WEFT_STEP=${variant%%:*}
if [[ $variant == *:* ]]; then export WEFT_SIMPLE_SLICES=${variant#*:}; else unset WEFT_SIMPLE_SLICES; fi
# ---- tests --------------------------------------------------------------------------------------
if begin tests; then
  if [[ $variant == "$first_variant" ]]; then  # they run no kernel: once is enough
    step "host-side GPU-runtime tests (gpu_host)"
    (cd "$build" && ctest -R '^gpu_host: ' --output-on-failure --timeout "$test_timeout" -j "$jobs") ||
      fail "gpu_host tests"
  fi
  if ((gpu)); then
    step "GPU tests (label gpu), $variant step"
    # WEFT_GPU_TESTS (a ctest -R regex) runs a subset, to split the label over device calls.
    (cd "$build" && ctest -L gpu -R "${WEFT_GPU_TESTS:-.}" --output-on-failure \
      --timeout "$test_timeout") || fail "gpu tests [$variant]"
  else
    skipped+=("gpu tests [$variant] (no GPU)")
    echo "SKIP gpu tests [$variant]: no GPU" >> "$summary"
  fi
  end "tests [$variant]"
fi

# ---- weft-perf: correctness sweeps against the CPU reference ------------------------------------
# A run passes when weft-perf exits 0; its rows' #wrong columns (9 and 14) then hold no count above
# zero, and the cells it checked are counted (a size outside a file's band, or an in-place call
# of an out-of-place file, is N/A there: not checked). A launch that needs more threadblocks
# resident than the one GPU holds ("not resident") is no verdict on the algorithm: emulated
# ranks share one device, where a real job gives each rank its own. Such runs are counted and
# listed apart, not as failures.
run_perf() {  # name, arguments...
  local name="$1 [$variant]"
  local file cells
  file="$work/perf/$variant/$(echo "$1" | tr -c 'A-Za-z0-9._-' '_').txt"
  shift
  mkdir -p "$work/perf/$variant"
  perf_runs=$((perf_runs + 1))
  if ! timeout 300 "$perf" "$@" > "$file" 2>&1; then
    if grep -q '^weft-perf: .*: not resident: ' "$file"; then
      perf_unfit=$((perf_unfit + 1))
      unfit+=("$name")
      echo "SKIP $name: $(grep -o 'the launch needs [0-9]* threadblocks' "$file" | head -1) resident on one GPU"
      return 0
    fi
    perf_failed=$((perf_failed + 1))
    fail "weft-perf $name"
    tail -15 "$file"
    return 1
  fi
  cells=$(awk '!/^#/ && NF >= 16 {n += ($9 != "N/A") + ($14 != "N/A")} END {print n+0}' "$file")
  perf_cells=$((perf_cells + cells))
  if ((cells == 0)); then
    perf_unchecked=$((perf_unchecked + 1))
    echo "ok $name: nothing checked (no size of the run in the file's band)"
  else
    echo "ok $name: none wrong of $cells checked (size, call mode)"
  fi
}

# The sizes to run a file at, as weft-perf's "-b B -e E": the range [LO, HI] within the file's
# minBytes/maxBytes band, so that a band file is checked where a user's call selects it. A band
# wholly below the range is run at its highest size. A band wholly above it is run at its lowest
# size, where that is at most CAP, and not at all (nothing printed) where it is larger: the CPU
# reference takes tens of seconds a run at 256 MB and more.
band_sizes() {  # xml lo hi cap (bytes)
  local xml=$1 lo=$2 hi=$3 cap=$4 min max b e
  min=$(grep -o 'minBytes="[0-9]*"' "$xml" | head -1 | tr -dc 0-9)
  max=$(grep -o 'maxBytes="[0-9]*"' "$xml" | head -1 | tr -dc 0-9)
  min=${min:-0} max=${max:-0}
  b=$lo e=$hi
  ((min > b)) && b=$min
  ((max > 0 && max < e)) && e=$max
  if ((b > e)); then
    if ((min > hi)); then
      ((min > cap)) && return 0
      b=$min e=$min
    else
      b=$max e=$max
    fi
  fi
  echo "-b $b -e $e"
}

# Runs weft-perf's check on one file at its band_sizes, or says why it is not run.
check_file() {  # name, xml, ranks, lo, hi, cap, -f factor
  local sizes
  sizes=$(band_sizes "$2" "$4" "$5" "$6")
  if [[ -z "$sizes" ]]; then
    perf_beyond=$((perf_beyond + 1))
    echo "SKIP $1 [$variant]: its band starts above $6 bytes, the largest size this step checks"
    return 0
  fi
  # shellcheck disable=SC2086  # $sizes is options
  run_perf "$1" --xml "$2" --ranks "$3" $sizes -f "$7" -n 3 -w 1 -c 1
}

if begin check && device_step check; then
  step "weft-perf correctness: built-in algorithms, every protocol, $variant step"
  ranks_list="2 4 8"; ((quick)) && ranks_list="8"
  for n in $ranks_list; do
    for proto in Simple LL LL128; do
      for alg in ring ring:2 allpairs allpairs-chain allgather-ring; do
        for dtype in float int32; do
          # 64 MB at 8 ranks; smaller at 2 and 4 and in quick runs, where the CPU reference
          # dominates the time.
          top=64M; { ((n < 8)) || ((quick)); } && top=16M
          run_perf "check $alg $proto $n $dtype" --builtin "$alg" --proto "$proto" --ranks "$n" \
            -b 4 -e $top -f 64 -n 3 -w 1 -c 1 -d "$dtype"
        done
      done
    done
  done
  end "check [$variant]"
fi

if begin corpus && device_step corpus; then
  step "weft-perf correctness: MSCCL XML corpus, $variant step"
  if [[ -n "$corpus" && -d "$corpus" ]]; then
    top=$((16 << 20)) cap=$((1 << 30)); ((quick)) && top=$((1 << 20)) cap=$((64 << 20))
    while IFS= read -r xml; do
      n=$(grep -o 'ngpus="[0-9]*"' "$xml" | head -1 | tr -dc 0-9)
      [[ -n "$n" && "$n" -le 64 ]] || continue
      check_file "corpus ${xml#"$corpus"/}" "$xml" "$n" 1024 $top $cap 32
    done < <(find "$corpus" -name '*.xml' | sort)
  else
    skipped+=("corpus (no corpus)")
    echo "SKIP corpus: no MSCCL XML corpus (--corpus DIR, or --pack-deps copies ../shared/msccl-xml)" >> "$summary"
    echo "gpu-check: no MSCCL XML corpus (give --corpus DIR, or carry build-deps/msccl-xml); skipped"
  fi
  end "corpus [$variant]"
fi

if begin library && device_step library; then
  step "weft-perf correctness: the compiler's algorithm library (weftc compile), $variant step"
  weftc="$build/tools/weftc/weftc"
  mkdir -p "$work/library"
  if "$weftc" list > "$work/library/weftc-list.txt" 2>&1; then
    ranks_list="2 4 8"; ((quick)) && ranks_list="8"
    top=16M; ((quick)) && top=1M
    while read -r name coll rest; do
      [[ -n "$name" ]] || continue
      for n in $ranks_list; do
        shape=(--ranks "$n")
        [[ "$rest" == --nodes* ]] && { ((n >= 4)) || continue; shape=(--nodes 2 --gpus-per-node $((n / 2))); }
        for proto in Simple LL LL128; do
          xml="$work/library/$name-$n-$proto.xml"
          if ! "$weftc" compile "$name" "${shape[@]}" --proto "$proto" -o "$xml" > "$xml.log" 2>&1; then
            echo "gpu-check: weftc compile $name ${shape[*]} --proto $proto wrote no XML ($(tail -1 "$xml.log"))"
            continue
          fi
          run_perf "library $name $n $proto" --xml "$xml" --ranks "$n" -b 4 -e $top -f 64 -n 3 -w 1 -c 1
        done
      done
    done < <(tail -n +2 "$work/library/weftc-list.txt")
  else
    fail "weftc list"
  fi
  end "library [$variant]"
fi

if begin synth && device_step synth; then
  step "weft-perf correctness: synthesized algorithms (weftc synthesize -t h100-nvswitch), $variant step"
  weftc="$build/tools/weftc/weftc"
  top=$((64 << 20)); ((quick)) && top=$((16 << 20))
  mkdir -p "$work/synth"
  colls="allgather reducescatter allreduce alltoall"
  if ! "$weftc" synthesize --help > /dev/null 2>&1; then
    fail "weftc has no synthesize command (LEMON, liblemon-dev, was not found: see the configure log)"
    colls=""
  fi
  for coll in $colls; do
    folder="$work/synth/$coll"
    # Synthesized once: the files do not depend on the step variant.
    if [[ ! -f "$folder/tuner.csv" ]] &&
      ! "$weftc" synthesize -t h100-nvswitch -c "$coll" -b 1K -e $top --all --force -o "$folder" \
        > "$work/synth-$coll.log" 2>&1; then
      fail "weftc synthesize -c $coll"
      tail -5 "$work/synth-$coll.log"
      continue
    fi
    while IFS= read -r xml; do
      check_file "synth $coll ${xml#"$folder"/}" "$xml" 8 1024 $top $top 8
    done < <(find "$folder" -name '*.xml' | sort)
    # The chosen files' timings beside the built-in all-pairs of the same collective, where
    # weft-perf has one (allreduce), in one run of this machine.
    while IFS= read -r xml; do
      name="synth-$coll-$(basename "$xml" .xml)"
      file="$work/synth/$variant-$name.txt"
      sizes=$(band_sizes "$xml" 1024 $top $top)
      [[ -n "$sizes" ]] || continue
      # shellcheck disable=SC2086  # $sizes is options
      if ! timeout 300 "$perf" --xml "$xml" --ranks 8 $sizes -f 4 -n 10 -w 2 -c 0 > "$file" 2>&1; then
        if grep -q '^weft-perf: .*: not resident: ' "$file"; then
          echo "SKIP timing of $name [$variant]: not resident on one GPU"
        else
          fail "bench $name [$variant]"
        fi
      fi
      { echo "## $name [$variant step]: weft-perf --xml $(basename "$xml") --ranks 8"; cat "$file"; echo; } >> "$tables"
    done < <(find "$folder" -maxdepth 1 -name '*.xml' | sort)
  done
  file="$work/synth/$variant-builtin-allpairs.txt"
  timeout 300 "$perf" --builtin allpairs --ranks 8 --proto Simple -b 1K -e $top -f 4 -n 10 -w 2 -c 0 \
    > "$file" 2>&1 || fail "bench builtin allpairs [$variant]"
  { echo "## allreduce built-in allpairs Simple [$variant step], beside the synthesized"; cat "$file"; echo; } >> "$tables"
  end "synth [$variant]"
fi

# ---- benchmarks ---------------------------------------------------------------------------------
if begin bench && device_step bench; then
  step "benchmarks: 8 emulated ranks, $variant step"
  mkdir -p "$work/bench"
  bench() {  # name, arguments...
    local name=$1; shift
    local file="$work/bench/$variant-$name.txt"
    echo "---- weft-perf $*"
    if timeout 300 "$perf" "$@" > "$file" 2>&1; then :; else fail "bench $name [$variant]"; fi
    { echo "## $name [$variant step]: weft-perf $*"; cat "$file"; echo; } >> "$tables"
    cat "$file"
  }
  max=256M; iters=(-n 20 -w 5); ((quick)) && { max=64M; iters=(-n 5 -w 2); }
  bench ring-simple --builtin ring --ranks 8 --proto Simple -b 1K -e $max -f 2 "${iters[@]}" -c 0
  bench ring8-simple --builtin ring:8 --ranks 8 --proto Simple -b 1K -e $max -f 2 "${iters[@]}" -c 0
  bench allpairs-simple --builtin allpairs --ranks 8 --proto Simple -b 1K -e $max -f 2 "${iters[@]}" -c 0
  bench allpairs-ll-graph --builtin allpairs --ranks 8 --proto LL -b 1K -e 1M -f 2 "${iters[@]}" -c 1 -G 100
  bench ring-ll128 --builtin ring:4 --ranks 8 --proto LL128 -b 1K -e 16M -f 4 "${iters[@]}" -c 0

  step "targets, $variant step"
  # Row fields: 1 size, 6-10 out-of-place (time us, algbw, busbw, #wrong, % of copy bandwidth),
  # 11-15 the same in place, 16 device bytes.
  # Targets (docs/performance.md): the memory floor at >= 64 MB (all-pairs 75 %, the rings 70 %),
  # all-pairs LL 1 KB with graphs <= 8 us, the 8-channel ring Simple 1 KB <= 25 us.
  for target in ring-simple:70 ring8-simple:70 allpairs-simple:75; do
    name=${target%%:*}
    awk -v name="$name [$variant]" -v want="${target##*:}" '!/^#/ && NF >= 16 && $1 >= 64*1024*1024 {
        best = ($15 > $10) ? $15 : $10;
        verdict = (best >= want) ? "PASS" : "MISS";
        printf "%s %s: %d bytes at %.1f %% (out of place) / %.1f %% (in place) of the device-memory floor (target >= %d %%)\n", verdict, name, $1, $10, $15, want }' \
      "$work/bench/$variant-$name.txt" | tee -a "$summary"
  done
  awk -v variant="$variant" '!/^#/ && NF >= 16 && $1 == 1024 {
      best = ($11 < $6) ? $11 : $6;
      verdict = (best <= 8) ? "PASS" : "MISS";
      printf "%s allpairs LL 1 KB with CUDA graphs [%s]: %.2f us out of place, %.2f us in place per call (target <= 8 us)\n", verdict, variant, $6, $11 }' \
    "$work/bench/$variant-allpairs-ll-graph.txt" | tee -a "$summary"
  awk -v variant="$variant" '!/^#/ && NF >= 16 && $1 == 1024 {
      best = ($11 < $6) ? $11 : $6;
      verdict = (best <= 25) ? "PASS" : "MISS";
      printf "%s ring 8 channels Simple 1 KB [%s]: %.2f us out of place, %.2f us in place per call (target <= 25 us)\n", verdict, variant, $6, $11 }' \
    "$work/bench/$variant-ring8-simple.txt" | tee -a "$summary"
  end "bench [$variant]"
fi

done
unset WEFT_STEP WEFT_SIMPLE_SLICES
((perf_runs)) && note "weft-perf correctness runs: $perf_runs, failed: $perf_failed, not resident on one GPU: $perf_unfit, nothing in band: $perf_unchecked, band above the step's sizes: $perf_beyond; cells checked: $perf_cells"

# ---- multi-process (CUDA IPC), when there are GPUs for it ---------------------------------------
if begin multi && device_step multi; then
  gpus=$(nvidia-smi --list-gpus | wc -l)
  if ((gpus >= 2)); then
    step "multi-process: $gpus processes, one GPU each, CUDA IPC"
    port=$((20000 + RANDOM % 20000))
    top=64M; ((quick)) && top=16M
    pids=()
    for ((r = 0; r < gpus; r++)); do
      timeout 300 "$perf" --builtin ring --proto Simple --rank $r --nranks "$gpus" \
        --rendezvous "127.0.0.1:$port" --device $r -b 1K -e $top -f 8 -n 10 -w 2 -c 1 \
        > "$work/multiprocess-$r.txt" 2>&1 &
      pids+=($!)
    done
    for ((r = 0; r < gpus; r++)); do
      wait "${pids[$r]}" || fail "multi-process rank $r"
    done
    cat "$work/multiprocess-0.txt"
  else
    skipped+=("multi (one GPU)")
    echo "SKIP multi: one GPU (several processes on one GPU would need MPS)" >> "$summary"
    echo "gpu-check: one GPU; the multi-process step needs two or more"
  fi
  end multi
fi

# ---- the NCCL shim: real NCCL at one rank, standalone mode on the GPU ---------------------------
if begin nccl && device_step nccl; then
  step "NCCL shim (scripts/gpu-check-nccl.sh)"
  WEFT_GPU_CHECK_LOGS="$work/nccl-check" WEFT_NCCL_CHECK_QUICK=$quick \
    bash "$root/scripts/gpu-check-nccl.sh" "$build" || fail "NCCL shim check"
  end nccl
fi

# ---- across hosts: the probe, then two processes as two hosts on the one GPU ------------------
if begin hosts && device_step hosts; then
  step "across hosts (scripts/gpu-check-hosts.sh)"
  WEFT_GPU_CHECK_LOGS="$work/hosts-check" WEFT_HOSTS_CHECK_QUICK=$quick \
    bash "$root/scripts/gpu-check-hosts.sh" "$build" | tee "$work/hosts-check.txt"
  hosts_status=${PIPESTATUS[0]}
  grep -E "^(NCCL|GPUDirect|RDMA|UCX|NCCL_HOSTID|across hosts on the GPU)" "$work/hosts-check.txt" \
    >> "$summary"
  ((hosts_status == 0)) || fail "across hosts on the GPU"
  end hosts
fi

# ---- PyTorch under the shim: one process over real NCCL, four standalone, DDP ----------------
if begin torch && device_step torch; then
  step "PyTorch (scripts/gpu-check-torch.sh)"
  WEFT_GPU_CHECK_LOGS="$work/torch-check" bash "$root/scripts/gpu-check-torch.sh" "$build"
  torch_status=$?
  if ((torch_status == 77)); then
    skipped+=("torch (no PyTorch)")
    echo "SKIP torch: python3 has no torch, or torch sees no GPU" >> "$summary"
  elif ((torch_status != 0)); then
    fail "PyTorch check"
  fi
  end torch
fi

if ((${#failures[@]})); then finish 1; fi
if ((!gpu)); then
  echo "gpu-check: no GPU: the host-side steps passed, the device steps were skipped"
  finish 77
fi
echo "gpu-check: every step passed"
finish 0
