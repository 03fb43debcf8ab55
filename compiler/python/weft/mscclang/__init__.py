"""Runs msccl-tools' MSCCLang programs unchanged on Weft.

    python3 -m weft.mscclang [--limits msccl|weft] [--min-bytes N] [--max-bytes N] SCRIPT ARGS...

For the run, `msccl`, `msccl.language`, `msccl.language.collectives` and `msccl.topologies`
resolve to Weft's face (face/msccl); an msccl-tools installed elsewhere is untouched and usable
again afterwards. Each XML() prints an <algo> that Weft compiled and verified, or prints Weft's
report (naming the program's lines) to stderr and ends the run with exit code 1.
"""

import contextlib
import os
import runpy
import sys

from weft.mscclang import core
from weft.mscclang import settings as run_settings

FACE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "face")


@contextlib.contextmanager
def face():
    """`msccl.*` is Weft's face inside the block, whatever was imported before or after."""
    saved_path = list(sys.path)
    saved = {name: mod for name, mod in sys.modules.items()
             if name == "msccl" or name.startswith("msccl.")}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, FACE_DIR)
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n == "msccl" or n.startswith("msccl.")]:
            del sys.modules[name]
        sys.modules.update(saved)
        sys.path[:] = saved_path


def run(script, args=(), settings=None):
    """Runs SCRIPT with ARGS as `python3 SCRIPT ARGS` would, under the face. Returns the exit code
    (0, or what the script or a refused XML() exited with)."""
    saved_argv = list(sys.argv)
    saved_settings = run_settings.current
    if settings is not None:
        run_settings.current = settings
    sys.argv = [script] + list(args)
    try:
        with face():
            # As python3 SCRIPT does: the script's folder comes first (after the face).
            sys.path.insert(1, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as done:
        code = done.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    finally:
        core._current_program = None
        run_settings.current = saved_settings
        sys.argv = saved_argv
