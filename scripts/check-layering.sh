#!/usr/bin/env bash
# The layering of Weft's libraries (docs/architecture.md §1), checked over the sources and the
# CMake targets. Usage: scripts/check-layering.sh [BUILD_DIR]   (default ./build, configured)
#
# 1. No source includes by a relative path ("../x.h") a file of another library: another
#    library's headers are reached through that library's include/ folder, by linking it.
# 2. No CMake target declares an include directory inside the source tree but outside its own
#    folder (BUILD_DIR/layering-targets.txt, written at configure time): no PRIVATE path into
#    another library's sources.
# 3. Dependencies run one way: a file of a module includes public headers (weft/<module>/...) of
#    the modules below it only — never one above it or beside it.
# Exit status 1 with every finding listed, 0 when there is none.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
exec python3 - "$root" "$build" <<'PY'
import os, re, sys

root, build = sys.argv[1], sys.argv[2]
findings = []

# Which public modules each part of the tree may include, by the part's folder. Listed bottom
# up; weft/version.h and weft/weft.h (generated, and the C API) are everybody's.
ALLOWED = [
    ("runtime/ir/", {"ir"}),
    ("runtime/cpu/", {"ir", "cpu"}),
    ("runtime/gpu/program/", {"ir", "gpu"}),
    ("runtime/gpu/communicator/", {"ir", "gpu"}),
    ("runtime/gpu/kernel/", {"ir", "gpu"}),
    # The proxy sits on the communicator; host mode and the CUDA runtime on the proxy.
    ("runtime/gpu/proxy/", {"ir", "gpu", "proxy"}),
    ("runtime/gpu/", {"ir", "gpu", "proxy"}),
    ("runtime/predict/", {"ir", "cpu", "gpu", "predict"}),
    ("runtime/tuning/", {"ir", "cpu", "gpu", "predict", "tuning"}),
    ("runtime/tools/", {"ir", "cpu", "gpu", "proxy"}),
    ("dsl/", {"ir", "dsl"}),
    ("compiler/algorithms/", {"ir", "dsl", "algorithms"}),
    ("compiler/include/", {"ir", "cpu", "dsl", "compiler"}),
    ("compiler/src/", {"ir", "cpu", "gpu", "predict", "dsl", "compiler"}),
    ("compiler/python/", {"ir", "cpu", "gpu", "predict", "dsl", "compiler", "algorithms"}),
    ("synthesis/", {"ir", "cpu", "gpu", "predict", "tuning", "dsl", "compiler", "synthesis"}),
    ("compiler/tools/", {"ir", "cpu", "gpu", "predict", "tuning", "dsl", "compiler", "algorithms",
                         "synthesis"}),
    ("plugin/", {"ir", "gpu", "proxy", "tuning", "plugin"}),
]
# The libraries and programs, each a folder (the longest prefix names a file's owner).
PARTS = ["runtime/ir/", "runtime/cpu/", "runtime/gpu/program/", "runtime/gpu/communicator/",
         "runtime/gpu/kernel/", "runtime/gpu/proxy/", "runtime/gpu/host/", "runtime/gpu/cuda/",
         "runtime/predict/",
         "runtime/tuning/", "runtime/tools/weft-perf/", "dsl/", "compiler/algorithms/",
         "compiler/tools/weftc/", "compiler/tools/", "compiler/python/", "compiler/", "synthesis/",
         "plugin/",
         "examples/nccl/", "examples/user-algorithms/"]


def owner(rel):
    if rel.startswith("tests/"):
        parts = rel.split("/")
        return "/".join(parts[:2]) + "/" if len(parts) > 2 else "tests/"
    return max((p for p in PARTS if rel.startswith(p)), key=len, default=rel.split("/")[0] + "/")


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
        allowed = next((mods for prefix, mods in ALLOWED if rel.startswith(prefix)), None)
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
                    findings.append(f"{rel}:{number}: includes {header}, of module "
                                    f"'{mod.group(1)}', which this part may not depend on "
                                    f"(allowed: {', '.join(sorted(allowed))})")

manifest = os.path.join(build, "layering-targets.txt")
if not os.path.isfile(manifest):
    findings.append(f"{manifest}: missing; configure the build first (scripts/build.sh)")
else:
    real_root = os.path.realpath(root)
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            target, source_dir, dirs = line.split("|", 2)
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

findings = list(dict.fromkeys(findings))
for finding in findings:
    print(finding)
print(f"check-layering: {len(findings)} finding(s)" if findings else
      "check-layering: every include stays within its library or goes down a layer")
sys.exit(1 if findings else 0)
PY
