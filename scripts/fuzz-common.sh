# Sourced by the fuzz scripts (fuzz-xml.sh, fuzz-rendezvous.sh).

# fuzz_build BUILD TARGET: configures the clang build folder BUILD and builds TARGET in it.
# Coverage instrumentation (fuzzer-no-link) for the libraries; the fuzz target itself links
# libFuzzer's main. WEFT_SANITIZE adds address and undefined-behaviour sanitizers, with no
# recovery, so that any UB is a crash libFuzzer keeps.
fuzz_build() {
  local build="$1" target="$2" root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
    -DWEFT_FUZZ=ON -DWEFT_SANITIZE=ON -DWEFT_ENABLE_CUDA=OFF >/dev/null
  ninja -C "$build" -j2 "$target" >/dev/null
}

# fuzz_summary TITLE LOG ARTIFACTS EXISTING STATUS prints what a
# libFuzzer run (-print_final_stats=1) did, from its log, and returns non-zero when it crashed:
# a non-zero STATUS, or more files in ARTIFACTS than the EXISTING count before the run.
fuzz_summary() {
  local title="$1" log="$2" artifacts="$3" existing="$4" status="$5"
  local runs speed added coverage new
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  added=$(grep -o 'stat::new_units_added: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  new=$(( $(find "$artifacts" -type f | wc -l) - existing ))
  echo "$title"
  echo "  runs            ${runs:-?} (${speed:-?} per second)"
  echo "  coverage        ${coverage:-?} edges; ${added:-?} new corpus units"
  echo "  crashes         ${new} new artifact(s) in $artifacts"
  echo "  fuzzer exit     ${status} (log: $log)"
  if [ "$status" -ne 0 ] || [ "$new" -ne 0 ]; then
    grep -E '^==[0-9]+==ERROR|SUMMARY:|runtime error|deadly signal|fuzz_' "$log" | head -20 || true
    return 1
  fi
}
