#!/usr/bin/env bash
# The layering of Weft's libraries (docs/architecture.md §1), checked over the sources and the
# CMake targets. Usage: scripts/check-layering.sh [BUILD_DIR]   (default ./build, configured)
#
# 1. No source includes by a relative path ("../x.h") a file of another library: another
#    library's headers are reached through that library's include/ folder, by linking it.
# 2. No CMake target declares an include directory inside the source tree but outside its own
#    folder (BUILD_DIR/layering-targets.txt, written at configure time): no PRIVATE path into
#    another library's sources.
# 3. Dependencies run one way, down layers.txt (the one list of the parts): a file of a part
#    includes public headers (weft/<part>/...) of the parts below it only, and a target links
#    only targets of its own part or below it — never one above it or beside it.
# 4. layers.txt itself: each part uses only parts listed above it. README.md and
#    docs/architecture.md quote it (a fenced block of its lines).
# Exit status 1 with every finding listed, 0 when there is none.
set -euo pipefail
# WEFT_LAYERING_ROOT: another tree to check (its test builds small ones).
root=${WEFT_LAYERING_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
build=${1:-$root/build}
exec python3 - "$root" "$build" <<'PY'
import os, re, sys

root, build = sys.argv[1], sys.argv[2]
findings = []

# The parts, bottom up, from the one list (layers.txt): name, folder, the parts it uses.
LAYERS = os.path.join(root, "layers.txt")
parts = []  # (name, folder, uses)
with open(LAYERS, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, folder, *uses = line.split()
        uses = [] if uses == ["-"] else uses
        known = {p[0] for p in parts}
        for used in uses:
            if used not in known:
                findings.append(f"layers.txt:{number}: {name} uses '{used}', which is not listed "
                                "above it (a part uses only the parts below it)")
        parts.append((name, folder, uses))
by_name = {name: (folder, uses) for name, folder, uses in parts}


def below(name):
    """The parts `name` may use: what it uses, and what those use."""
    seen, todo = set(), list(by_name[name][1])
    while todo:
        part = todo.pop()
        if part in seen or part not in by_name:
            continue
        seen.add(part)
        todo.extend(by_name[part][1])
    return seen


def part_of(rel):
    """The part whose folder holds `rel` (the longest), or None."""
    best = None
    for name, folder, _ in parts:
        if rel.startswith(folder) and (best is None or len(folder) > len(by_name[best][0])):
            best = name
    return best


def owner(rel):
    if rel.startswith("tests/"):
        pieces = rel.split("/")
        return "/".join(pieces[:2]) + "/" if len(pieces) > 2 else "tests/"
    return part_of(rel) or rel.split("/")[0] + "/"


SOURCE = re.compile(r".*\.(h|hpp|cpp|cc|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')
SKIP = {".git", "build", "node_modules"}

for folder, dirs, files in os.walk(root):
    rel_folder = os.path.relpath(folder, root)
    dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith("build")
               and not (rel_folder == "." and d.startswith("."))]
    for name in files:
        if not SOURCE.match(name):
            continue
        path = os.path.join(folder, name)
        rel = os.path.relpath(path, root)
        part = None if rel.startswith("tests/") else part_of(rel)
        # A part includes its own headers and those of the parts below it; weft/version.h and
        # weft/weft.h (generated, and the C API) are everybody's.
        allowed = None if part is None else below(part) | {part}
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                if header.startswith("../") or "/../" in header:
                    target = os.path.relpath(os.path.normpath(os.path.join(folder, header)), root)
                    if owner(target) != owner(rel):
                        findings.append(f"{rel}:{number}: includes {header} ({owner(target)}) by "
                                        "a relative path; link the library that owns it instead")
                mod = re.match(r"weft/([a-z_]+)/", header)
                if allowed is not None and mod and mod.group(1) not in allowed:
                    findings.append(f"{rel}:{number}: includes {header}, of part "
                                    f"'{mod.group(1)}', which layers.txt does not put below "
                                    f"'{part}' (it may use: {', '.join(sorted(allowed))})")

manifest = os.path.join(build, "layering-targets.txt")
if not os.path.isfile(manifest):
    findings.append(f"{manifest}: missing; configure the build first (scripts/build.sh)")
else:
    real_root = os.path.realpath(root)
    targets = {}
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            target, source_dir, dirs, part, links = (line.split("|") + ["-", ""])[:5]
            targets[target] = (part, [l for l in links.split(";") if l])
            own = os.path.realpath(source_dir)
            # A library whose CMakeLists sits in its src/ owns the folder above (include/ + src/).
            if os.path.basename(own) == "src":
                own = os.path.dirname(own)
            for d in filter(None, dirs.split(";")):
                real = os.path.realpath(d)
                inside_tree = real == real_root or real.startswith(real_root + os.sep)
                in_build = real.startswith(os.path.realpath(build) + os.sep)
                if inside_tree and not in_build and not (real == own or real.startswith(own + os.sep)):
                    findings.append(f"target {target} ({os.path.relpath(own, root)}): include "
                                    f"directory {os.path.relpath(real, root)} is outside its own "
                                    "folder")

    # Links run down the list too: a target links only targets of its own part or below it.
    for target, (part, links) in targets.items():
        if part not in by_name:
            continue
        allowed = below(part) | {part}
        for linked in links:
            linked_part = targets.get(linked, ("-", []))[0]
            if linked_part in by_name and linked_part not in allowed:
                findings.append(f"target {target} ({part}) links {linked} ({linked_part}), which "
                                f"layers.txt does not put below it")

# The documents that show the layers quote the list: a fenced block equal to its lines.
listed = [line.rstrip() for line in open(LAYERS, encoding="utf-8")
          if line.strip() and not line.startswith("#")]
for doc in ("README.md", "docs/architecture.md"):
    text = open(os.path.join(root, doc), encoding="utf-8").read()
    blocks = [b.strip("\n").split("\n") for b in re.findall(r"```[a-z]*\n(.*?)```", text, re.S)]
    if not any([l.rstrip() for l in b] == listed for b in blocks):
        findings.append(f"{doc}: does not quote layers.txt (a fenced block of its lines, as "
                        "they are there)")

findings = list(dict.fromkeys(findings))
for finding in findings:
    print(finding)
print(f"check-layering: {len(findings)} finding(s)" if findings else
      "check-layering: every include stays within its library or goes down a layer")
sys.exit(1 if findings else 0)
PY
