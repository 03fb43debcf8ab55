"""Runs msccl-tools' MSCCLang programs unchanged on Weft.

    python3 -m weft.mscclang [--limits msccl|weft] [--min-bytes N] [--max-bytes N] SCRIPT ARGS...

For the run, `msccl`, `msccl.language`, `msccl.language.collectives` and `msccl.topologies`
resolve to Weft's face (face/msccl); an msccl-tools installed elsewhere is untouched and usable
again afterwards. Each XML() prints an <algo> that Weft compiled and verified, or prints Weft's
report (naming the program's lines) to stderr and ends the run with exit code 1.
"""

import contextlib
import io
import os
import runpy
import sys

from weft.mscclang import core
from weft.mscclang import settings as run_settings

_HERE = os.path.dirname(os.path.abspath(__file__))
FACE_DIR = os.path.join(_HERE, "face")


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
    (0, or what the script or a refused XML() exited with).

    What the script prints to stdout (its XML, Check()'s lines) reaches stdout only when the run
    succeeds: a run that ends in an error leaves stdout empty, so that `> out.xml` never holds
    half a result, and its printed text goes to stderr after Weft's report."""
    saved_argv = list(sys.argv)
    saved_settings = run_settings.current
    saved_stdout = sys.stdout
    printed = io.StringIO()
    if settings is not None:
        run_settings.current = settings
    sys.argv = [script] + list(args)
    code = 0
    try:
        sys.stdout = printed
        with face():
            # As python3 SCRIPT does: the script's folder comes first (after the face).
            sys.path.insert(1, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    except core.ProgramError as error:
        print(f"weft: {error.report}", file=sys.stderr)
        code = 1
    except SystemExit as done:
        code = done.code
        if code is None:
            code = 0
        elif not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
    except Exception as error:  # noqa: BLE001  (a failure inside the face, reported as Weft's)
        where = _program_line(error.__traceback__)
        if where is None:
            raise  # the script's own bug: Python's traceback says it best
        print(f"weft: {where}: error: {type(error).__name__}: {error} (inside MSCCLang's "
              f"{_face_function(error.__traceback__)}; the program's call is at {where})",
              file=sys.stderr)
        code = 1
    finally:
        sys.stdout = saved_stdout
        core._current_program = None
        run_settings.current = saved_settings
        sys.argv = saved_argv
    text = printed.getvalue()
    if code == 0:
        sys.stdout.write(text)
    elif text:
        print("weft: nothing was written to stdout; the program printed:", file=sys.stderr)
        sys.stderr.write(text)
    return code


def _frames(traceback):
    while traceback is not None:
        yield traceback.tb_frame, traceback.tb_lineno
        traceback = traceback.tb_next


def _in_face(frame):
    return os.path.abspath(frame.f_code.co_filename).startswith(_HERE)


def _is_program(frame):
    name = frame.f_code.co_filename
    stdlib = os.path.dirname(os.__file__)
    return not _in_face(frame) and not name.startswith("<") and \
        not os.path.abspath(name).startswith(stdlib)


def _program_line(traceback):
    """"script.py:12": the program's last frame before an error raised inside the face; None when
    no face code ran after the program's last frame (the program's own bug)."""
    frames = list(_frames(traceback))
    last = max((k for k, (frame, _) in enumerate(frames) if _is_program(frame)), default=None)
    if last is None or not any(_in_face(frame) for frame, _ in frames[last + 1:]):
        return None
    frame, line = frames[last]
    return f"{os.path.basename(frame.f_code.co_filename)}:{line}"


def _face_function(traceback):
    """The face's function the program called: "split()"."""
    frames = [frame for frame, _ in _frames(traceback)]
    last = max((k for k, frame in enumerate(frames) if _is_program(frame)), default=-1)
    called = next((frame for frame in frames[last + 1:] if _in_face(frame)), None)
    return f"{called.f_code.co_name}()" if called else "code"
