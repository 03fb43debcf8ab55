"""MSCCLang's language, traced in Python and compiled by Weft: the program (MSCCLProgram), its
chunk references (Ref) and the calls a program makes (chunk(), create_scratch(), XML(), Check()).

A program runs as it does under msccl-tools: the same buffers of symbolic chunks, the same
answers from ``chunk()``, ``get_dst_rank()`` and ``Check()``. Each ``copy`` and ``reduce`` is also
recorded with the user's file:line; ``XML()`` replays the record into Weft's C++ DSL (which names
that line in every error), compiles it, verifies it on the CPU reference executor and prints the
XML only when it is verified.

What is not MSCCLang's: the record and the replay. The semantics kept are msccl-tools' (commit
7e7d6bf, msccl/language/); where they are odd (a copy's destination index resolved with the
source rank, a copy onto itself doing nothing, ``group`` spanning gaps) they are kept on purpose:
existing programs depend on them.

The rest of the language has modules of its own, as in msccl-tools: buffers.py, chunks.py,
policies.py (msccl.language.types) and collectives.py; settings.py holds the run's options and
replay.py the replay. This module's ``__all__`` still names the whole language, so that a star
import of it gives all of it, as before the split.
"""

import dataclasses
import os
import sys
from dataclasses import dataclass, field  # noqa: F401  (MSCCLang programs get these from us)

from weft.mscclang import settings
from weft.mscclang.buffers import Buffer, BufferSlice
from weft.mscclang.chunks import Chunk, ReduceChunk  # noqa: F401  (in __all__)
from weft.mscclang.collectives import (  # noqa: F401  (in __all__)
    AllGather,
    AllReduce,
    AllToAll,
    Broadcast,
    Collective,
    ReduceScatter,
)
from weft.mscclang.policies import ReplicationPolicy, ThreadblockPolicy
from weft.mscclang.replay import Replay
# Callers of weft.mscclang.run() build its settings as core.Settings.
from weft.mscclang.settings import Settings  # noqa: F401


class WeftRefusal(SystemExit):
    """Raised by XML() for a program Weft cannot prove: the report went to stderr; exit code 1."""

    def __init__(self, report):
        super().__init__(1)
        self.report = report


class ProgramError(SystemExit):
    """A misuse of the language found while the program runs (a rank or chunk index out of range):
    Weft's report names the program's line; exit code 1, no traceback through the face."""

    def __init__(self, message, origin=None):
        super().__init__(1)
        self.report = f"{origin or _origin()}: error: {message}"


# --- where the user wrote it --------------------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))


def _origin():
    """The innermost caller outside this package: "script.py:12"."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_HERE):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


# --- programs ------------------------------------------------------------------------------------

_current_program = None


def _curr():
    if _current_program is None:
        raise RuntimeError("No Program in context")
    return _current_program


@dataclass
class _Operation:
    kind: str  # "copy" or "reduce"
    src: tuple  # (rank, buffer, index): buffer is Buffer.input/output or a scratch name
    dst: tuple
    size: int
    sendtb: int
    recvtb: int
    ch: int
    origin: str


class MSCCLProgram:
    def __init__(
        self,
        name,
        topo,
        collective,
        instances,
        protocol="Simple",
        threadblock_policy=ThreadblockPolicy.auto,
        interleaved_replication=True,
        instr_fusion=True,
        check_xml=True,
        dependence_nop=False,
    ):
        assert protocol in ("Simple", "LL", "LL128"), (
            f"Given protocol: {protocol}. Must be either Simple, LL, LL128"
        )
        self.name = name
        self.topo = topo
        self.collective = collective
        self.num_ranks = topo.num_nodes()
        self.instances = instances
        self.protocol = protocol
        self.threadblock_policy = threadblock_policy
        self.interleaved_replication = interleaved_replication
        self.replication_policy = (
            ReplicationPolicy.interleaved if interleaved_replication else ReplicationPolicy.duplicated
        )
        # Weft always fuses where it proves safe, and writes the dependencies MSCCL's runtime
        # needs: instr_fusion, check_xml and dependence_nop are accepted and change nothing.
        self.instr_fusion = instr_fusion
        self.check_xml = check_xml
        self.dependence_nop = dependence_nop
        self.origin = _origin()
        self.buffers = collective.init_buffers()
        # A snapshot of the precondition, for replaying a custom collective.
        self._initial = [
            {b: list(chunks) for b, chunks in per_rank.items()} for per_rank in self.buffers
        ]
        self._operations = []

    def __enter__(self):
        global _current_program
        if _current_program is not None:
            raise RuntimeError("There is already a MSCCL Program in context")
        _current_program = self
        return self

    def __exit__(self, exc_type, exc_value, exc_traceback):
        global _current_program
        if _current_program is not self:
            raise RuntimeError("This program is not currently in context")
        _current_program = None

    # -- MSCCLang's symbolic buffers --
    def apply_send(self, src, src_buffer, src_index, dst, dst_buffer, dst_index, size):
        src_buffer, src_index = self.collective.get_buffer_index(src, src_buffer, src_index)
        dst_buffer, dst_index = self.collective.get_buffer_index(dst, dst_buffer, dst_index)
        sb = self.buffers[src][src_buffer]
        db = self.buffers[dst][dst_buffer]
        for i in range(size):
            db[dst_index + i] = sb[src_index + i]

    def apply_reduce(self, src, src_buffer, src_index, dst, dst_buffer, dst_index, size):
        src_buffer, src_index = self.collective.get_buffer_index(src, src_buffer, src_index)
        dst_buffer, dst_index = self.collective.get_buffer_index(dst, dst_buffer, dst_index)
        sb = self.buffers[src][src_buffer]
        db = self.buffers[dst][dst_buffer]
        for i in range(size):
            db[dst_index + i] = db[dst_index + i].reduce(dst, sb[src_index + i])

    def get_ref(self, rank, buffer, index, size):
        buffer, index = self.collective.get_buffer_index(rank, buffer, index)
        return Ref(rank, buffer, index, size, self)

    # -- what a program may name: checked where MSCCLang would fail with an IndexError --
    def check_rank(self, rank, what):
        if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank < self.num_ranks:
            raise ProgramError(f"{what}: rank {rank!r} is not a rank of '{self.name}', which has "
                               f"{self.num_ranks} (0 to {self.num_ranks - 1})")

    def check_chunks(self, rank, buffer, index, size, what):
        """The chunks [index, index + size) of an input or output buffer exist (scratch buffers
        grow as they are written, so any index of theirs is good)."""
        if buffer is not Buffer.input and buffer is not Buffer.output:
            return
        chunks = self.buffers[rank].get(buffer)
        count = 0 if chunks is None else len(chunks)
        if not isinstance(index, int) or isinstance(index, bool) or index < 0 or \
                index + size > count:
            last = f"{index + size - 1}" if isinstance(index, int) else "?"
            span = f"chunk {index!r}" if size == 1 else f"chunks {index!r} to {last}"
            raise ProgramError(f"{what}: {span} of rank {rank}'s {buffer.name} buffer does not "
                               f"exist: it has {count} chunk{'' if count == 1 else 's'} "
                               f"(0 to {count - 1})" if count else
                               f"{what}: rank {rank} has no {buffer.name} buffer chunks")

    def get_chunks(self, rank, buffer, index, size=1):
        chunks = [None] * size
        for i in range(size):
            if self.buffers[rank][buffer] and index + i < len(self.buffers[rank][buffer]):
                chunks[i] = self.buffers[rank][buffer][index + i]
        return chunks

    def check_buffer_exists(self, rank, name):
        if name not in self.buffers[rank]:
            self.buffers[rank][name] = BufferSlice(Buffer.scratch, name)

    def check(self):
        return self.collective.check(self)

    def _record(self, kind, src, dst, sendtb, recvtb, ch):
        self._operations.append(
            _Operation(
                kind,
                (src.rank, src.buffer, src.index),
                (dst.rank, dst.buffer, dst.index),
                src.size,
                sendtb,
                recvtb,
                ch,
                _origin(),
            )
        )

    # -- Weft --
    def compile(self):
        """Replays the record into Weft's DSL and compiles it: (CompileResult or None, report)."""
        return Replay(self).run()

    def generate_xml(self):
        result, report = self.compile()
        if result is None or not result.ok:
            # The XML owns stdout; the report goes to stderr and the run fails.
            print(f"weft: {self.name}: no XML written: Weft cannot prove this program", file=sys.stderr)
            print(report, file=sys.stderr)
            raise WeftRefusal(report)
        if settings.current.on_result is not None:
            settings.current.on_result(result)
        return result.xml()


@dataclass
class Ref:
    rank: int
    buffer: object
    index: int
    size: int
    prog: MSCCLProgram

    def __repr__(self):
        return f"Ref(Buffer:{self.buffer}, Index:{self.index}, Size:{self.size}, Rank:{self.rank})"

    def __eq__(self, other):
        return (
            type(other) is Ref
            and (self.rank, self.buffer, self.index, self.size) ==
            (other.rank, other.buffer, other.index, other.size)
            and self.prog is other.prog
        )

    __hash__ = None

    def _end(self):
        return self.index + self.size

    def _get_chunk(self, index):
        return self.prog.buffers[self.rank][self.buffer][index]

    def split(self, num):
        assert self.size % num == 0, (
            f"Trying to split a chunk of {self.size} elements into {num} parts"
        )
        size = self.size // num
        return [self.prog.get_ref(self.rank, self.buffer, self.index + i * size, size)
                for i in range(num)]

    def group(self, other):
        assert self.rank == other.rank, (
            f"Trying to concatenate chunks on ranks {self.rank} and {other.rank}"
        )
        assert self.buffer == other.buffer, (
            f"Trying to concatenate chunks in {self.buffer} and {other.buffer}"
        )
        first, second = (self, other) if self.index < other.index else (other, self)
        end = max(first._end(), second._end())
        return Ref(self.rank, self.buffer, first.index, end - first.index, self.prog)

    def copy(self, dst, buffer=None, index=-1, sendtb=-1, recvtb=-1, ch=-1):
        prog = self.prog
        prog.check_rank(dst, "copy")
        prog.check_buffer_exists(dst, buffer)
        # Without an index: the same place on the destination; a scratch buffer without one
        # appends.
        if index == -1 and buffer is None:
            index = self.index
            buffer = self.buffer
        elif index == -1 and buffer is not Buffer.input and buffer is not Buffer.output:
            index = prog.buffers[dst][buffer].instance_size()
        # msccl-tools resolves the destination with the *source* rank (an in-place allgather's
        # input index lands in the output block of the sender), then with the destination's.
        buffer, index = prog.collective.get_buffer_index(self.rank, buffer, index)
        if not (prog.topo.link(self.rank, dst) or dst == self.rank):
            raise ProgramError(f"copy: no link from rank {self.rank} to rank {dst} in the topology")
        prog.check_buffer_exists(dst, buffer)
        dst_ref = prog.get_ref(dst, buffer, index, self.size)
        prog.check_chunks(dst, dst_ref.buffer, dst_ref.index, self.size, "copy")
        if dst_ref == self:  # a copy onto itself does nothing (and answers None)
            return None
        prog.apply_send(self.rank, self.buffer, self.index, dst, buffer, index, self.size)
        prog._record("copy", self, dst_ref, sendtb, recvtb, ch)
        return dst_ref

    def reduce(self, other_chunkref, sendtb=-1, recvtb=-1, ch=-1):
        prog = self.prog
        dst = self.rank
        if not isinstance(other_chunkref, Ref):
            raise ProgramError(f"reduce: {other_chunkref!r} is not a chunk reference (chunk() "
                               "answers one, or None for an empty slot)")
        src = other_chunkref.rank
        if not (prog.topo.link(src, dst) or src == dst):
            raise ProgramError(f"reduce: no link from rank {src} to rank {dst} in the topology")
        if other_chunkref.size != self.size:
            raise ProgramError(f"reduce: {self.size} chunk(s) on rank {dst} with "
                               f"{other_chunkref.size} from rank {src}: the sizes must match")
        prog.apply_reduce(
            src, other_chunkref.buffer, other_chunkref.index, dst, self.buffer, self.index,
            self.size,
        )
        prog._record("reduce", other_chunkref, self, sendtb, recvtb, ch)
        return self

    def get_origin_index(self, index=0):
        return self._get_chunk(index + self.index).origin_index

    def get_origin_rank(self, index=0):
        return self._get_chunk(index + self.index).origin_rank

    def get_dst_index(self, index=0):
        return self._get_chunk(index + self.index).dst_index

    def get_dst_rank(self, index=0):
        return self._get_chunk(index + self.index).dst_rank

    def print_chunk_info(self, index=0):
        print(self._get_chunk(index + self.index))


# ChunkRef is MSCCLang's base class of Ref; programs only name it in annotations.
ChunkRef = Ref


def chunk(rank, buffer, index, size=1):
    prog = _curr()
    prog.check_rank(rank, "chunk")
    if buffer is Buffer.input or buffer is Buffer.output:
        prog.check_chunks(rank, buffer, index, size, "chunk")
    elif buffer not in prog.buffers[rank]:
        raise ProgramError(f"chunk: rank {rank} has no buffer {buffer!r} (create_scratch() or a "
                           "copy into it makes one)")
    elif not isinstance(index, int) or not 0 <= index < len(prog.buffers[rank][buffer]):
        raise ProgramError(f"chunk: rank {rank}'s buffer {buffer!r} has "
                           f"{len(prog.buffers[rank][buffer])} chunks, not one at {index!r}")
    if prog.buffers[rank][buffer][index] is None:
        return None
    return prog.get_ref(rank, buffer, index, size)


def create_scratch(rank, name):
    _curr().check_rank(rank, "create_scratch")
    _curr().check_buffer_exists(rank, name)


def XML():
    print(_curr().generate_xml())


def Check():
    answer = _curr().check()
    if settings.current.on_check is not None:
        settings.current.on_check(answer)
    return answer


def Print():
    pass


__all__ = [
    "Buffer", "BufferSlice", "Check", "Chunk", "ChunkRef", "Collective", "MSCCLProgram", "Print",
    "ReduceChunk", "Ref", "ReplicationPolicy", "ThreadblockPolicy", "XML", "chunk",
    "create_scratch", "dataclass", "field", "AllGather", "AllReduce", "AllToAll", "Broadcast",
    "ReduceScatter",
]

# Keep dataclasses referenced for programs that use dataclasses.field via our star export.
_ = dataclasses
