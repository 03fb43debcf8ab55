"""python3 -m weft.mscclang [options] SCRIPT ARGS...: see weft/mscclang/__init__.py."""

import argparse
import sys

import weft._weft as _weft
from weft.mscclang import run
from weft.mscclang import settings as run_settings


def _size_name(b):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m weft.mscclang",
        description="Run an MSCCLang program (msccl-tools) unchanged: each XML() prints MSCCL XML "
        "that Weft compiled and verified on its CPU reference executor.",
    )
    parser.add_argument("--limits", choices=["msccl", "weft"], default="msccl",
                        help="limits profile the XML obeys: msccl (MSCCL's executor, the default) "
                        "or weft (Weft's runtime)")
    parser.add_argument("--min-bytes", type=int, default=0, metavar="N",
                        help="smallest call (bytes) the algorithm is for (minBytes)")
    parser.add_argument("--max-bytes", type=int, default=0, metavar="N",
                        help="largest call (bytes) the algorithm is for; 0: unbounded (maxBytes)")
    parser.add_argument("--seeds", type=int, default=0, metavar="K",
                        help="interleavings the executor tries per case (default: Weft's)")
    parser.add_argument("-t", "--topology", default="", metavar="T",
                        help="the machine whose predicted times choose among legal schedules: a "
                        "preset (a100-nvswitch, h100-nvswitch, ...) or an NCCL topology XML "
                        "(default: a100-nvswitch)")
    parser.add_argument("--nodes", type=int, default=0, metavar="N",
                        help="copies of that machine (default: ranks over the GPUs per node)")
    parser.add_argument("--gpus-per-node", type=int, default=0, metavar="G",
                        help="GPUs used per node (default: as many of the machine's as divide "
                        "the ranks)")
    parser.add_argument("--info", action="store_true",
                        help="after each XML(), print to stderr what `weftc info` reports (steps, "
                        "critical path, threadblocks, channels) and every schedule judged by time "
                        "with its predicted microseconds, and after each Check() its answer")
    parser.add_argument("script", help="the MSCCLang program")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    options = parser.parse_args(argv)
    if options.min_bytes < 0 or options.max_bytes < 0:
        parser.error("--min-bytes and --max-bytes must not be negative")
    if options.nodes < 0 or options.gpus_per_node < 0:
        parser.error("--nodes and --gpus-per-node must not be negative")
    if options.topology:
        problem = _weft.topology_error(options.topology)
        if problem:
            parser.error(f"-t {options.topology}: {problem.strip()}")
    if options.max_bytes and options.min_bytes > options.max_bytes:
        parser.error(f"--min-bytes {options.min_bytes} is above --max-bytes {options.max_bytes}")

    def report(result):
        s = result.info()
        print(f"weft: {s['steps']} steps, critical path {s['critical_path']}, "
              f"{s['threadblocks']} threadblocks, {s['channels']} channels", file=sys.stderr)
        sizes = " ".join(_size_name(b) for b in result.judged_sizes)
        for c in result.candidates:
            times = " ".join(f"{t:.2f}" for t in c["times_us"])
            print(f"weft: {'kept ' if c['kept'] else '     '}{c['description']}: {c['steps']} "
                  f"steps, critical path {c['critical_path']}, {c['threadblocks']} threadblocks, "
                  f"{c['channels']} channels; us at {sizes}: {times}", file=sys.stderr)

    def checked(answer):
        print(f"weft: Check() answered {answer}", file=sys.stderr)

    settings = run_settings.Settings(limits=options.limits, min_bytes=options.min_bytes,
                                     max_bytes=options.max_bytes, seeds=options.seeds,
                                     topology=options.topology, nodes=options.nodes,
                                     gpus_per_node=options.gpus_per_node,
                                     on_result=report if options.info else None,
                                     on_check=checked if options.info else None)
    return run(options.script, options.args, settings)


if __name__ == "__main__":
    sys.exit(main())
