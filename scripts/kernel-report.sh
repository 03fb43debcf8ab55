#!/usr/bin/env bash
# The interpreter kernel's resources as ptxas reports them: for every instantiation (type ×
# operator × protocol) its registers, spill stores and loads, stack frame, and the CTAs per SM
# that its registers allow at each thread count the residency check may choose. No GPU needed,
# only nvcc. A benchmark of the build, not a test: it prints a table, and exits 1 only when asked
# to check (--check) and an instantiation spills or has a stack frame above 64 bytes.
#
#   scripts/kernel-report.sh [--build DIR] [--types float,half,...] [--check]
#
# It compiles each kernel/types_<type>.cu with the flags of the configured build
# (compile_commands.json of DIR, default ./build) plus --resource-usage.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
types=""
check=0
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    --check) check=1; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "kernel-report: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
commands="$build/compile_commands.json"
if [[ ! -f "$commands" ]]; then
  echo "kernel-report: no $commands; configure the build with CUDA first (scripts/build.sh)" >&2
  exit 2
fi
work=$(mktemp -d -t weft-kernel-report-XXXXXX)
trap 'rm -rf "$work"' EXIT

# The nvcc command of each kernel unit, with its output sent to the scratch folder.
python3 - "$commands" "$work" "$types" > "$work/commands.sh" <<'PY' || exit 2
import json, re, shlex, sys
commands, work, wanted = sys.argv[1], sys.argv[2], sys.argv[3]
wanted = set(t for t in wanted.split(",") if t)
found = 0
for entry in json.load(open(commands)):
    m = re.search(r"kernel/types_(\w+)\.cu$", entry["file"])
    if not m or (wanted and m.group(1) not in wanted):
        continue
    words = shlex.split(entry["command"])
    out = words.index("-o")
    words[out + 1] = f"{work}/{m.group(1)}.o"
    words.insert(1, "--resource-usage")
    print(f"(cd {shlex.quote(entry['directory'])} && {shlex.join(words)}) > {work}/{m.group(1)}.log 2>&1 || echo FAILED {m.group(1)}")
    found += 1
if not found:
    sys.exit("kernel-report: no kernel/types_*.cu in the build (was CUDA found?)")
PY
jobs=${WEFT_JOBS:-$(nproc 2>/dev/null || echo 2)}
if grep -q . "$work/commands.sh"; then
  xargs -P "$jobs" -I{} bash -c '{}' < "$work/commands.sh" | tee "$work/failed"
fi
if [[ -s "$work/failed" ]]; then
  echo "kernel-report: a kernel unit did not compile; its log:" >&2
  cat "$work"/*.log >&2
  exit 2
fi

cat "$work"/*.log | python3 -c '
import re, subprocess, sys
check = sys.argv[1] == "1"
rows, name, frame, stores, loads = [], None, 0, 0, 0
for line in sys.stdin.read().splitlines():
    m = re.search(r"Compiling entry function .(\S+). for", line)
    if m:
        name, frame, stores, loads = m.group(1), 0, 0, 0
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m:
        frame, stores, loads = map(int, m.groups())
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m and name and "interpreter_kernel" in name:
        rows.append((name, int(m.group(1)), frame, stores, loads))
        name = None
if not rows:
    sys.exit("kernel-report: ptxas reported no interpreter kernel")
names = subprocess.run(["c++filt"], input="\n".join(r[0] for r in rows), capture_output=True,
                       text=True).stdout.splitlines()
def short(demangled):
    m = re.search(r"interpreter_kernel<(.+), weft::gpu::device::cuda::(\w+)Op, (\d)>", demangled)
    if not m:
        return ("?", "?", "?")
    t = m.group(1).replace("weft::gpu::device::cuda::", "")
    names = {"signed char": "int8", "unsigned char": "uint8", "int": "int32",
             "unsigned int": "uint32", "long": "int64", "unsigned long": "uint64",
             "float": "float", "double": "double"}
    n = re.match(r"NativeType<(.+)>", t)
    if n:
        t = names.get(n.group(1), n.group(1))
    t = t.replace("Bfloat16Type", "bfloat16").replace("HalfType", "half")
    return (t, m.group(2).lower(), ["Simple", "LL", "LL128"][int(m.group(3))])
table = sorted(short(n) + r[1:] for n, r in zip(names, rows))
threads = (512, 256, 128, 64)
head = "%-10s%-6s%-8s%5s%9s%10s%10s" % ("type", "op", "proto", "regs", "frame B", "spill st", "spill ld")
print(head + "".join("%13s" % ("CTAs/SM@%d" % t) for t in threads))
bad = 0
for t, op, proto, regs, frame, st, ld in table:
    # sm_90: 64K registers per SM, allocated per warp in units of 256; at most 32 CTAs and 2048
    # threads per SM.
    per_warp = -(-regs * 32 // 256) * 256
    fits = [min(65536 // (per_warp * (n // 32)), 32, 2048 // n) for n in threads]
    flag = "  <--" if (st or ld or frame > 64) else ""
    bad += bool(flag)
    print("%-10s%-6s%-8s%5d%9d%10d%10d" % (t, op, proto, regs, frame, st, ld) +
          "".join("%13d" % f for f in fits) + flag)
print("%d instantiations; %d spill or have a stack frame above 64 bytes" % (len(table), bad))
sys.exit(1 if (check and bad) else 0)
' "$check"
