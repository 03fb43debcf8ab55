#!/usr/bin/env bash
# Fuzzes what the standalone rendezvous decodes from others with libFuzzer (fuzz_rendezvous:
# rank 0's admission of a connection over a local socket pair, a participant's introduction to
# something that answers like rank 0, unique ids, addresses).
#
#   scripts/fuzz-rendezvous.sh [SECONDS]      default 300 s
#
# Builds in the clang build folder scripts/fuzz-xml.sh uses (build-fuzz, or $WEFT_FUZZ_BUILD_DIR)
# with -fsanitize=fuzzer,address,undefined, seeds a corpus with a well-formed hello and rank 0's
# nonce message (version 3), a unique id and addresses, runs one job for SECONDS and prints a summary. Crashing inputs are kept in
# <build>/fuzz-artifacts/rendezvous/; the exit status is non-zero when there are any.
set -euo pipefail

seconds="${1:-300}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "usage: $0 [SECONDS]   (a positive whole number, default 300)" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=fuzz-common.sh
source "$root/scripts/fuzz-common.sh"
build="${WEFT_FUZZ_BUILD_DIR:-$root/build-fuzz}"
corpus="$build/fuzz-corpus/rendezvous"
artifacts="$build/fuzz-artifacts/rendezvous"
log="$build/fuzz-rendezvous.log"
for tool in clang clang++ cmake ninja python3; do
  command -v "$tool" >/dev/null || { echo "fuzz-rendezvous: '$tool' not found" >&2; exit 2; }
done

fuzz_build "$build" fuzz_rendezvous

mkdir -p "$corpus" "$artifacts"
# Seeds: a hello of the right shape (magic "WEFT", version 3, rank 1 of 4, a nonce, a wrong
# proof), rank 0's first message (its nonce) followed by a wrong proof, a unique id as
# ncclGetUniqueId writes it, and addresses of each kind.
python3 - "$corpus" <<'PY'
import struct, sys, pathlib
out = pathlib.Path(sys.argv[1])
out.joinpath("hello").write_bytes(struct.pack("<IIii", 0x57454654, 3, 1, 4) + bytes(16 + 32))
out.joinpath("challenge").write_bytes(struct.pack("<II", 0x57454654, 3) + bytes(16) + bytes(32))
uid = b"weft-standalone:unix:weft-0123456789abcdef#" + b"00112233445566778899aabbccddeeff"
out.joinpath("unique-id").write_bytes(uid + bytes(128 - len(uid)))
out.joinpath("tcp").write_bytes(b"127.0.0.1:29500")
out.joinpath("every-interface").write_bytes(b":0")
PY

existing=$(find "$artifacts" -type f | wc -l)
echo "fuzz-rendezvous: ${seconds} s, one job, seeds $(find "$corpus" -type f | wc -l)"
set +e
"$build/tests/fuzz/fuzz_rendezvous" -max_total_time="$seconds" -max_len=512 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 "$corpus" >"$log" 2>&1
status=$?
set -e
fuzz_summary "fuzz-rendezvous summary" "$log" "$artifacts" "$existing" "$status"
