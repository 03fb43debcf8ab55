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
#
# A second table counts the synchronisation instructions in the machine code (SASS), so that a
# change to the kernel's barriers and fences shows without a GPU: BAR (CTA barriers: BAR.SYNC,
# BAR.RED.OR of __syncthreads_or, ...), MEMBAR (fences: MEMBAR.ALL.GPU, MEMBAR.ALL.SYS, ...) and
# CCTL (CCTL.IVALL: the L1 invalidation that each acquire fence or load brings), plus columns for
# ERRBAR (ERRBAR and CGAERRBAR, which follow each MEMBAR) and FENCE (FENCE.VIEW.ASYNC...) only
# where some appear. Static counts: the instructions in the code, not how often they run.
# Counted for an instantiation: its kernel function and the out-of-line functions that its
# kernel calls (CALL targets, followed transitively): wait_phase, and where the protocol has them
# local_step and rewrite_ll_padding, and the compiler's helpers (__cuda_sm20_rem_u64: no
# synchronisation; counted, not listed). Not counted: the cold paths report_failure (a failure's
# report) and wait_ll_line (an LL receive that has to wait), nor what only they call. Code inlined
# into a counted function counts wherever it runs (the deadline loop inside wait_phase, say).
# cuobjdump -sass prints each kernel's section whole, with its own copies of its callees after
# the kernel's code; the ELF symbol table (cuobjdump -elf) says where each callee starts and ends.
# Rows: float/sum (else the first type of --types) per protocol, then per protocol the min-max
# over every type and operator compiled. Without cuobjdump (beside the build's nvcc, on PATH, or
# $CUOBJDUMP) the table is left out with a note; the exit status is the first table's.
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
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
    if not found:
        open(f"{work}/nvcc", "w").write(words[0])  # cuobjdump is looked for beside it
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

# Names an instantiation by its demangled kernel name: (type, op, protocol). Shared by both tables.
names_py='
import re, subprocess
def demangle(mangled):
    return subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
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
'

cat "$work"/*.log | python3 -c "$names_py"'
import sys
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
names = demangle(r[0] for r in rows)
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
status=$?

# The synchronisation instructions in the SASS (see the header). An informational table: when it
# cannot be made, a note says why and the exit status stays the first table's.
nvcc=$(cat "$work/nvcc" 2>/dev/null || echo nvcc)
[[ "$nvcc" == */* ]] || nvcc=$(command -v "$nvcc" || echo "$nvcc")
nvcc_dir=$(dirname "$nvcc")
cuobjdump=${CUOBJDUMP:-}
if [[ -z "$cuobjdump" ]]; then
  if [[ -x "$nvcc_dir/cuobjdump" ]]; then
    cuobjdump="$nvcc_dir/cuobjdump"
  else
    cuobjdump=$(command -v cuobjdump || true)
  fi
fi
echo
if [[ -z "$cuobjdump" ]]; then
  echo "kernel-report: no cuobjdump (looked beside $nvcc_dir/nvcc, on PATH; or set CUOBJDUMP):" \
    "the table of barriers and fences in the SASS is left out" >&2
  exit "$status"
fi
for object in "$work"/*.o; do
  for what in sass elf; do
    # cuobjdump -sass runs nvdisasm, which sits beside it.
    if ! PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" "-$what" "$object" \
        > "${object%.o}.$what" 2> "$work/cuobjdump.err"; then
      echo "kernel-report: '$cuobjdump -$what $(basename "$object")' failed:" \
        "$(head -c 300 "$work/cuobjdump.err"); the table of barriers and fences in the SASS" \
        "is left out" >&2
      exit "$status"
    fi
  done
done

# shellcheck disable=SC2016  # the dollar signs are the Python code's (ELF symbol names)
python3 -c "$names_py"'
import glob, os, sys
types = [t for t in sys.argv[1].split(",") if t]
# Out-of-line callees that run only when a wait fails (its report) or has to wait (an LL line not
# there yet): not on the path of a step that runs without waiting, so not counted.
COLD = {"report_failure": "the failure report", "wait_ll_line": "the LL receive that waits"}
KINDS = ["BAR", "MEMBAR", "CCTL", "ERRBAR", "FENCE"]  # the last two: columns only if present

def kind(opcode):
    if opcode.endswith("ERRBAR"):  # ERRBAR, CGAERRBAR (after each MEMBAR)
        return "ERRBAR"
    for k in ("BAR", "MEMBAR", "CCTL", "FENCE"):
        if opcode == k or opcode.startswith(k + "."):
            return k
    return None

def base_name(demangled):
    # "void ns::local_step<T, Op>(args)" -> "local_step"
    while True:
        plain = re.sub(r"<[^<>]*>", "", demangled)
        if plain == demangled:
            break
        demangled = plain
    return re.split(r"::|\s", demangled.split("(")[0].strip())[-1]

def sections(path):
    # Yields (arch, line) for the lines of each ELF of a fatbin listing (cuobjdump -sass, -elf).
    arch, elf = None, False
    for line in open(path, errors="replace"):
        if line.startswith("Fatbin "):
            elf, arch = line.startswith("Fatbin elf"), None
            continue
        m = line.startswith("arch = ") and re.match(r"arch = (\w+)", line)
        if m and elf and arch is None:
            arch = m.group(1)
            continue
        if elf and arch:
            yield arch, line.rstrip("\n")

instr = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;")
rows, cold_seen, notes, unfollowed = [], set(), set(), {}
for path in sorted(glob.glob(os.path.join(sys.argv[2], "*.sass"))):
    # The ELF symbol table: each kernel section holds the kernel and its own copies of the
    # out-of-line functions it calls (local symbols "$kernel$callee", at an offset, with a size).
    kernel_of, parts = {}, {}  # (arch, section) -> kernel; (arch, kernel) -> [(start, end, name)]
    local = []
    symtab = False
    for arch, line in sections(path[:-len(".sass")] + ".elf"):
        if line.startswith(".section"):
            symtab = line.split()[1] == ".symtab"
            continue
        f = line.split()
        if not symtab or len(f) < 7 or not f[0].startswith("0x"):
            continue
        value, size, info, section, name = int(f[1], 16), int(f[2], 16), int(f[3], 16), f[5], f[6]
        if info & 0xf != 2:  # not a function
            continue
        if info >> 4 == 1:
            kernel_of[(arch, section)] = name
        else:
            local.append((arch, section, value, value + size, name.rsplit("$", 1)[-1]))
    callees = sorted(set(x[4] for x in local))
    readable = dict(zip(callees, (base_name(d) for d in demangle(callees))))
    for arch, section, start, end, name in local:
        kernel = kernel_of.get((arch, section))
        if kernel:
            parts.setdefault((arch, kernel), []).append((start, end, readable.get(name, name)))
    # The SASS of each kernel section, split into its functions.
    # (arch, kernel) -> {function ("": the kernel): {"counts": {kind: n}, "calls": {callee}}}
    code = {}
    current, where = None, None
    for arch, line in sections(path):
        m = "Function :" in line and re.search(r"Function : (\S+)", line)
        if m:
            where = parts.get((arch, m.group(1)), [])
            current = code.setdefault((arch, m.group(1)), {})
            continue
        m = instr.match(line)
        if not m or current is None:
            continue
        offset = int(m.group(1), 16)
        function = next((n for a, b, n in where if a <= offset < b), "")  # "": the kernel
        entry = current.get(function)
        if entry is None:
            entry = current[function] = {"counts": dict.fromkeys(KINDS, 0), "calls": set()}
        text = m.group(2)
        if text.startswith("@"):  # a predicate
            text = text.split(None, 1)[1]
        opcode = (text.split() or [""])[0]
        k = kind(opcode)
        if k:
            entry["counts"][k] += 1
        if opcode.startswith("CALL"):
            t = re.search(r"\s(0x[0-9a-f]+)\b", text)
            callee = t and next((n for a, b, n in where if a == int(t.group(1), 16)), None)
            if callee is None:  # no symbol starts there: what it calls is not counted
                unfollowed[os.path.basename(path)] = unfollowed.get(os.path.basename(path), 0) + 1
            else:
                entry["calls"].add(callee)
    if not code:
        continue
    newest = max((a for a, _ in code), key=lambda a: int(re.sub(r"\D", "", a) or 0))
    if len(set(a for a, _ in code)) > 1:
        notes.add("counted in the SASS of %s only, the newest architecture of the build" % newest)
    kernels = sorted(k for a, k in code if a == newest and "interpreter_kernel" in k)
    for kernel, demangled in zip(kernels, demangle(kernels)):
        functions = code[(newest, kernel)]
        counts, counted, todo, seen = dict.fromkeys(KINDS, 0), [], [""], {""}
        while todo:
            function = functions.get(todo.pop(), {"counts": {}, "calls": set()})
            for k in KINDS:
                counts[k] += function["counts"].get(k, 0)
            for callee in sorted(function["calls"] - seen):
                seen.add(callee)
                if callee in COLD:
                    cold_seen.add(callee)
                else:
                    counted.append(callee)
                    todo.append(callee)
        rows.append(short(demangled) + (counts, counted))
if not rows:
    print("kernel-report: no interpreter kernel in the SASS; the table of barriers and fences is"
          " left out")
    sys.exit(0)

protocols = ["Simple", "LL", "LL128"]
columns = [k for k in KINDS if k in ("BAR", "MEMBAR", "CCTL") or any(r[3][k] for r in rows)]
present = sorted(set(r[0] for r in rows))
first = next((t for t in types if t in present), "float" if "float" in present else present[0])
print("Synchronisation instructions in the SASS: static counts in the kernel and the out-of-line")
print("functions it calls, less the cold paths (see the header)")
print("%-10s%-6s%-8s" % ("type", "op", "proto") + "".join("%8s" % c for c in columns) +
      "  also counted")
for proto in protocols:
    for t, op, p, counts, counted in rows:
        if (t, op, p) == (first, "sum", proto):
            print("%-10s%-6s%-8s" % (t, op, p) + "".join("%8d" % counts[c] for c in columns) +
                  "  " + (", ".join(n for n in counted if not n.startswith("__")) or "-"))
for proto in protocols:
    chosen = [r for r in rows if r[2] == proto]
    if chosen:
        cells = []
        for c in columns:
            low, high = min(r[3][c] for r in chosen), max(r[3][c] for r in chosen)
            cells.append("%8s" % (str(low) if low == high else "%d-%d" % (low, high)))
        print("%-16s%-8s" % ("all (%d)" % len(chosen), proto) + "".join(cells))
print("all (N): min-max over the N instantiations of the protocol compiled (%d in all)" % len(rows))
if cold_seen:
    print("not counted: " + ", ".join("%s (%s)" % (n, COLD[n]) for n in sorted(cold_seen)))
for path, n in sorted(unfollowed.items()):
    notes.add("%d calls in %s go to no known function: their callees are not counted" % (n, path))
for note in sorted(notes):
    print("kernel-report: " + note)
' "$types" "$work"
exit "$status"
