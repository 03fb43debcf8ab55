"""One row of ../shared/mscclang-examples/README.md: runs SCRIPT ARGS unchanged through
`python3 -m weft.mscclang` and checks what the issue asks of it: every XML() printed one verified
<algo> (Weft prints nothing else), Check() answered True, and each algorithm has no more steps and
no longer a critical path than msccl-tools' output in the README's table.

    mscclang_example.py EXAMPLES_DIR SCRIPT [ARGS...]

Exits 77 (CTest's skip) when EXAMPLES_DIR, the program or the README is absent."""

import os
import re
import subprocess
import sys

SKIP = 77


def figures_from_readme(folder, script, args):
    """msccl-tools' steps / critical path / threadblocks / channels for this row."""
    with open(os.path.join(folder, "README.md"), encoding="utf-8") as readme:
        for line in readme:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 4 or not cells[0].startswith(f"`{script}`"):
                continue
            if cells[1].strip("`") != " ".join(args):
                continue
            numbers = [int(x) for x in re.findall(r"\d+", cells[-1])]
            if len(numbers) == 4:
                return dict(zip(("steps", "critical_path", "threadblocks", "channels"), numbers))
    raise SystemExit(f"README.md of {folder} has no row for {script} {' '.join(args)}")


def main():
    folder, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    # An empty or partial folder is as good as none: the program or its README row is missing.
    readme = os.path.join(folder, "README.md")
    if not os.path.isfile(readme) or not os.path.isfile(os.path.join(folder, script)):
        print(f"SKIP: {os.path.join(folder, script)} or {readme} is absent (the MSCCLang examples, "
              "kept outside the project; -DWEFT_MSCCLANG_EXAMPLES_DIR=FOLDER gives them)")
        return SKIP
    theirs = figures_from_readme(folder, script, args)
    run = subprocess.run(
        [sys.executable, "-m", "weft.mscclang", "--info", os.path.join(folder, script)] + args,
        capture_output=True, text=True, timeout=900)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        print(f"FAIL: exit code {run.returncode}")
        return 1

    from weft import info

    algos = re.findall(r"<algo\b.*?</algo>", run.stdout, flags=re.S)
    xml_calls = len(re.findall(r"^weft: \d+ steps", run.stderr, flags=re.M))
    checks = re.findall(r"weft: Check\(\) answered (\w+)", run.stderr)
    ok = True
    if not algos or len(algos) != xml_calls:
        print(f"FAIL: {len(algos)} <algo> printed for {xml_calls} XML() calls")
        ok = False
    leftover = re.sub(r"<algo\b.*?</algo>", "", run.stdout, flags=re.S).strip()
    if leftover:
        print(f"FAIL: stdout holds more than the XML: {leftover[:200]!r}")
        ok = False
    if not checks or any(answer != "True" for answer in checks):
        print(f"FAIL: Check() answered {checks}")
        ok = False
    for k, algo in enumerate(algos):
        ours = info(algo)
        print(f"algo {k}: weft {ours['steps']} / {ours['critical_path']} / {ours['threadblocks']} / "
              f"{ours['channels']}; msccl-tools {theirs['steps']} / {theirs['critical_path']} / "
              f"{theirs['threadblocks']} / {theirs['channels']} (steps / critical path / "
              "threadblocks / channels)")
        for what in ("steps", "critical_path"):
            if ours[what] > theirs[what]:
                print(f"FAIL: {what} {ours[what]} is more than msccl-tools' {theirs[what]}")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
