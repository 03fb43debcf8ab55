"""MSCCLang's language, traced in Python and compiled by Weft.

A program runs as it does under msccl-tools: the same buffers of symbolic chunks, the same
answers from ``chunk()``, ``get_dst_rank()`` and ``Check()``. Each ``copy`` and ``reduce`` is also
recorded with the user's file:line; ``XML()`` replays the record into Weft's C++ DSL (which names
that line in every error), compiles it, verifies it on the CPU reference executor and prints the
XML only when it is verified.

What is not MSCCLang's: the record and the replay. The semantics kept are msccl-tools' (commit
7e7d6bf, msccl/language/); where they are odd (a copy's destination index resolved with the
source rank, a copy onto itself doing nothing, ``group`` spanning gaps) they are kept on purpose:
existing programs depend on them.
"""

import contextlib
import dataclasses
import io
import os
import sys
from dataclasses import dataclass, field  # noqa: F401  (MSCCLang programs get these from us)
from enum import Enum

import weft._weft as _weft


# --- settings of one run (the runner's options) -------------------------------------------------


@dataclass
class Settings:
    limits: str = "msccl"  # limits profile the XML must obey
    min_bytes: int = 0
    max_bytes: int = 0  # 0: unbounded
    seeds: int = 0  # executor seeds per case; 0: Weft's default
    # When set, XML() also hands its CompileResult here, and Check() its answer (the runner's
    # --info prints them).
    on_result: object = None
    on_check: object = None


settings = Settings()


class WeftRefusal(SystemExit):
    """Raised by XML() for a program Weft cannot prove: the report went to stderr; exit code 1."""

    def __init__(self, report):
        super().__init__(1)
        self.report = report


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


# --- MSCCLang's types ---------------------------------------------------------------------------


class Buffer(Enum):
    input = "i"
    output = "o"
    scratch = "s"

    def __str__(self):
        return self.value

    def __lt__(self, other):
        return self.value < other.value

    def __gt__(self, other):  # msccl-tools' definition, kept as it is
        return self.value < other.value


class ThreadblockPolicy(Enum):
    auto = "auto"
    manual = "manual"

    def __str__(self):
        return self.value


class ReplicationPolicy(Enum):
    duplicated = "duplicated"
    interleaved = "interleaved"
    packed = "packed"
    none = "none"

    def __str__(self):
        return self.value


class BufferSlice:
    """A scratch buffer of one rank: grows when written past its end (append)."""

    def __init__(self, buf, name):
        self.name = name
        self.buf = buf
        self.offset = -1
        self.chunks = []

    def get_buffer(self):
        return self.buf

    def instance_size(self):
        return len(self.chunks)

    def set_offset(self, offset):
        self.offset = offset

    def get_global_index(self, index):
        return self.offset + index

    def __getitem__(self, index):
        return self.chunks[index]

    def __setitem__(self, index, value):
        while len(self.chunks) < index:
            self.chunks.append(None)
        if index == len(self.chunks):
            self.chunks.append(value)
        else:
            self.chunks[index] = value

    def __len__(self):
        return len(self.chunks)

    def __iter__(self):
        return iter(self.chunks)


@dataclass
class Chunk:
    origin_rank: int
    origin_index: int
    dst_rank: int = -1
    dst_index: int = -1

    def reduce(self, dst, chunk):
        if type(chunk) is ReduceChunk:
            return chunk.reduce(dst, self)
        if type(chunk) is Chunk:
            return ReduceChunk(dst, [self, chunk])
        return None

    def __hash__(self):
        return hash((self.origin_rank, self.origin_index))

    def __eq__(self, other):
        return (
            type(other) is Chunk
            and self.origin_rank == other.origin_rank
            and self.origin_index == other.origin_index
        )

    def __lt__(self, other):
        return (self.origin_rank, self.origin_index) < (other.origin_rank, other.origin_index)


@dataclass(eq=False)
class ReduceChunk:
    creation_rank: int
    chunks: list

    def reduce(self, dst, chunk):
        if type(chunk) is ReduceChunk:
            return ReduceChunk(self.creation_rank, self.chunks + chunk.chunks)
        if type(chunk) is Chunk:
            return ReduceChunk(self.creation_rank, self.chunks + [chunk])
        return None

    def sort(self):
        self.chunks.sort()

    def __hash__(self):
        self.sort()
        return hash((self.creation_rank,) + tuple(self.chunks))

    def __eq__(self, other):
        if type(other) is not ReduceChunk:
            return False
        self.sort()
        other.sort()
        return self.chunks == other.chunks


# --- collectives ---------------------------------------------------------------------------------


class Collective:
    """Base of MSCCLang's collectives; a program's own subclass defines init_buffers and check."""

    def __init__(self, num_ranks, chunk_factor, inplace, root=0, num_ranks_per_node=-1, **kwargs):
        self.num_ranks = num_ranks
        self.chunk_factor = chunk_factor
        self.inplace = inplace
        self.root = root
        self.name = "custom"
        self.num_ranks_per_node = num_ranks if num_ranks_per_node == -1 else num_ranks_per_node
        self.num_chunk_groups = kwargs.get("num_chunk_groups", 1)

    def init_buffers(self):
        pass

    def check(self, prog):
        pass

    def get_buffer_index(self, rank, buffer, index):
        return buffer, index

    # How Weft knows this collective: None for a custom one (replayed from init_buffers/check).
    def _weft_collective(self):
        return None


def _report(line):
    print(line)


class AllToAll(Collective):
    def __init__(self, num_ranks, chunk_factor, inplace):
        Collective.__init__(self, num_ranks, chunk_factor, inplace)
        self.name = "alltoall"

    def init_buffers(self):
        n, c = self.num_ranks, self.chunk_factor
        rank_buffers = []
        for r in range(n):
            inputs = [Chunk(r, k, k // c, k % c + r * c) for k in range(n * c)]
            outputs = inputs if self.inplace else [None] * (n * c)
            rank_buffers.append({Buffer.input: inputs, Buffer.output: outputs})
        return rank_buffers

    def check(self, prog):
        n, c = self.num_ranks, self.chunk_factor
        correct = True
        for r in range(n):
            output = prog.buffers[r][Buffer.output]
            for i in range(n):
                for ch in range(c):
                    index = ch + i * c
                    chunk = output[index]
                    want = ch + r * c
                    if chunk is None or chunk.origin_rank != i or chunk.origin_index != want:
                        _report(
                            f"Rank {r} chunk {index} is incorrect should be chunk({i},{want}) "
                            f"given {chunk}"
                        )
                        correct = False
        return correct

    def _weft_collective(self):
        return _weft.Collective.alltoall(self.num_ranks, self.chunk_factor, self.inplace)


class AllGather(Collective):
    def __init__(self, num_ranks, chunk_factor, inplace, create_all_chunks=False):
        Collective.__init__(self, num_ranks, chunk_factor, inplace)
        self.name = "allgather"
        self.create_all_chunks = create_all_chunks

    def init_buffers(self):
        n, c = self.num_ranks, self.chunk_factor
        rank_buffers = []
        for r in range(n):
            if self.inplace:
                output = [None] * (n * c)
                for q in range(n) if self.create_all_chunks else [r]:
                    for ch in range(c):
                        output[q * c + ch] = Chunk(q, ch, -1, q * c + ch)
                # As in msccl-tools, the input is a copy of the rank's part of the output: writes
                # to the input resolve into the output (get_buffer_index).
                rank_buffers.append(
                    {Buffer.input: output[r * c : (r + 1) * c], Buffer.output: output}
                )
            else:
                inputs = [Chunk(r, ch, -1, r * c + ch) for ch in range(c)]
                rank_buffers.append({Buffer.input: inputs, Buffer.output: [None] * (n * c)})
        return rank_buffers

    def check(self, prog):
        n, c = self.num_ranks, self.chunk_factor
        correct = True
        for r in range(n):
            output = prog.buffers[r][Buffer.output]
            for i in range(n):
                for ch in range(c):
                    index = i * c + ch
                    chunk = output[index]
                    if chunk is None:
                        _report(f"Rank {r} chunk {index} is incorrect should be ({i}, {ch}) given None")
                        correct = False
                    elif chunk.origin_rank != i or chunk.origin_index != ch:
                        _report(
                            f"Rank {r} chunk {index} is incorrect should be ({i}, {ch}) given "
                            f"({chunk.origin_rank}, {chunk.origin_index})"
                        )
                        correct = False
        return correct

    def get_buffer_index(self, rank, buffer, index):
        if self.inplace and buffer == Buffer.input:
            return Buffer.output, index + rank * self.chunk_factor
        return buffer, index

    def _weft_collective(self):
        return _weft.Collective.allgather(self.num_ranks, self.chunk_factor, self.inplace)


class AllReduce(Collective):
    def __init__(self, num_ranks, chunk_factor, inplace, num_ranks_per_node=-1, **kwargs):
        num_chunk_groups = kwargs.get("num_chunk_groups", num_ranks)
        Collective.__init__(
            self, num_ranks, chunk_factor, inplace, num_ranks_per_node,
            num_chunk_groups=num_chunk_groups,
        )
        self.name = "allreduce"

    def init_buffers(self):
        c = self.chunk_factor
        rank_buffers = []
        for r in range(self.num_ranks):
            inputs = [Chunk(r, k, -1, k) for k in range(c)]
            outputs = inputs if self.inplace else [None] * c
            rank_buffers.append({Buffer.input: inputs, Buffer.output: outputs})
        return rank_buffers

    def check(self, prog):
        c = self.chunk_factor
        buf = Buffer.input if self.inplace else Buffer.output
        expected = [ReduceChunk(-1, [Chunk(r, k) for r in range(self.num_ranks)]) for k in range(c)]
        correct = True
        for r in range(self.num_ranks):
            output = prog.buffers[r][buf]
            for k in range(c):
                chunk = output[k]
                if chunk is None or chunk != expected[k]:
                    _report(
                        f"Rank {r} chunk {k} is incorrect should be ReduceChunk index {k} from "
                        f"all ranks, given {chunk}"
                    )
                    correct = False
        return correct

    def get_buffer_index(self, rank, buffer, index):
        if self.inplace and buffer == Buffer.output:
            return Buffer.input, index
        return buffer, index

    def _weft_collective(self):
        return _weft.Collective.allreduce(self.num_ranks, self.chunk_factor, self.inplace)


class ReduceScatter(Collective):
    def __init__(self, num_ranks, chunk_factor, inplace):
        Collective.__init__(self, num_ranks, chunk_factor, inplace)
        self.name = "reducescatter"

    def init_buffers(self):
        n, c = self.num_ranks, self.chunk_factor
        rank_buffers = []
        for r in range(n):
            inputs = [Chunk(r, i * c + k, i, k) for i in range(n) for k in range(c)]
            if self.inplace:
                rank_buffers.append({Buffer.input: inputs})
            else:
                rank_buffers.append({Buffer.input: inputs, Buffer.output: [None] * c})
        return rank_buffers

    def check(self, prog):
        n, c = self.num_ranks, self.chunk_factor
        buf = Buffer.input if self.inplace else Buffer.output
        expected = [ReduceChunk(-1, [Chunk(r, k) for r in range(n)]) for k in range(n * c)]
        correct = True
        for r in range(n):
            output = prog.buffers[r][buf]
            for k in range(c):
                want = r * c + k
                index = want if self.inplace else k
                chunk = output[index]
                if chunk is None or chunk != expected[want]:
                    _report(
                        f"Rank {r} chunk {index} is incorrect should be index {want} from all "
                        f"ranks given {chunk}"
                    )
                    correct = False
        return correct

    def get_buffer_index(self, rank, buffer, index):
        if self.inplace and buffer == Buffer.output:
            return Buffer.input, index + rank * self.chunk_factor
        return buffer, index

    def _weft_collective(self):
        return _weft.Collective.reducescatter(self.num_ranks, self.chunk_factor, self.inplace)


class Broadcast(Collective):
    def __init__(self, num_ranks, chunk_factor, inplace, root, create_all_chunks=False):
        Collective.__init__(self, num_ranks, chunk_factor, inplace, root)
        self.name = "broadcast"
        self.root = root

    def init_buffers(self):
        c = self.chunk_factor
        rank_buffers = []
        for r in range(self.num_ranks):
            if self.inplace:
                inputs = [Chunk(self.root, k, -1, k) for k in range(c)]
                rank_buffers.append({Buffer.input: inputs, Buffer.output: inputs})
            else:
                inputs = [Chunk(self.root, k, -1, k) if r == self.root else None for k in range(c)]
                rank_buffers.append({Buffer.input: inputs, Buffer.output: [None] * c})
        return rank_buffers

    def check(self, prog):
        correct = True
        for r in range(self.num_ranks):
            output = prog.buffers[r][Buffer.output]
            for k in range(self.chunk_factor):
                chunk = output[k]
                if chunk is None or chunk.origin_rank != self.root or chunk.origin_index != k:
                    _report(
                        f"Rank {r} chunk {k} is incorrect should be ({self.root}, {k}) given {chunk}"
                    )
                    correct = False
        return correct

    def _weft_collective(self):
        return _weft.Collective.broadcast(
            self.num_ranks, self.root, self.chunk_factor, self.inplace
        )


_BUILT_IN = (AllToAll, AllGather, AllReduce, ReduceScatter, Broadcast)


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
        return _Replay(self).run()

    def generate_xml(self):
        result, report = self.compile()
        if result is None or not result.ok:
            # The XML owns stdout; the report goes to stderr and the run fails.
            print(f"weft: {self.name}: no XML written: Weft cannot prove this program", file=sys.stderr)
            print(report, file=sys.stderr)
            raise WeftRefusal(report)
        if settings.on_result is not None:
            settings.on_result(result)
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
        assert prog.topo.link(self.rank, dst) or dst == self.rank, f"No link from {self.rank} to {dst}"
        prog.check_buffer_exists(dst, buffer)
        dst_ref = prog.get_ref(dst, buffer, index, self.size)
        if dst_ref == self:  # a copy onto itself does nothing (and answers None)
            return None
        prog.apply_send(self.rank, self.buffer, self.index, dst, buffer, index, self.size)
        prog._record("copy", self, dst_ref, sendtb, recvtb, ch)
        return dst_ref

    def reduce(self, other_chunkref, sendtb=-1, recvtb=-1, ch=-1):
        prog = self.prog
        dst = self.rank
        src = other_chunkref.rank
        assert prog.topo.link(src, dst) or src == dst, f"No link from {src} to {dst}"
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
    if _curr().buffers[rank][buffer][index] is None:
        return None
    return _curr().get_ref(rank, buffer, index, size)


def create_scratch(rank, name):
    _curr().check_buffer_exists(rank, name)


def XML():
    print(_curr().generate_xml())


def Check():
    answer = _curr().check()
    if settings.on_check is not None:
        settings.on_check(answer)
    return answer


def Print():
    pass


# --- replay into Weft ----------------------------------------------------------------------------


class _Replay:
    """One compilation of a traced program: the collective, the options, every operation with
    its origin, then compile and verify."""

    def __init__(self, prog):
        self.prog = prog
        self.scratch_names = {}

    def run(self):
        prog = self.prog
        try:
            collective = self._collective()
        except _Refused as refused:
            return None, str(refused)
        replication = (
            _weft.Replication.auto if prog.interleaved_replication else _weft.Replication.blocked
        )
        policy = (
            _weft.ThreadblockPolicy.manual
            if prog.threadblock_policy == ThreadblockPolicy.manual
            else _weft.ThreadblockPolicy.auto
        )
        try:
            options = _weft.Options(
                protocol=prog.protocol,
                instances=prog.instances,
                threadblocks=policy,
                replication=replication,
                min_bytes=settings.min_bytes,
                max_bytes=settings.max_bytes,
                limits=settings.limits,
                # msccl-tools gives independent flows channels of their own where no hint says
                # otherwise: the compiler's widest search does the same where it helps.
                channels=_weft.ChannelPolicy.shortest_path,
            )
            program = _weft.Program(prog.name, collective, options)
        except (_weft.DslError, ValueError) as e:
            return None, f"{prog.origin}: MSCCLProgram: {getattr(e, 'reason', e)}"
        try:
            for op in prog._operations:
                program.origin = op.origin
                hints = _weft.Hints(channel=op.ch, sendtb=op.sendtb, recvtb=op.recvtb)
                src = program.chunk(op.src[0], self._buffer(program, op.src[1]), op.src[2], op.size)
                dst = program.chunk(op.dst[0], self._buffer(program, op.dst[1]), op.dst[2], op.size)
                if op.kind == "copy":
                    src.copy_to(dst, hints)
                else:
                    dst.reduce(src, hints)
        except _weft.DslError as e:
            return None, str(e)
        result = _weft.compile(program, settings.seeds)
        if result.ok:
            return result, ""
        return result, result.error_text()

    def _buffer(self, program, buffer):
        if buffer is Buffer.input:
            return _weft.input
        if buffer is Buffer.output:
            return _weft.output
        # Scratch buffers are named by any hashable value; Weft's by strings, one per value.
        name = self.scratch_names.get(buffer)
        if name is None:
            name = f"{buffer!r}"
            if name in self.scratch_names.values():
                name = f"{name}#{len(self.scratch_names)}"
            self.scratch_names[buffer] = name
        return program.scratch(name)

    def _collective(self):
        prog = self.prog
        coll = prog.collective
        if type(coll) in _BUILT_IN:
            if coll.num_ranks != prog.num_ranks:
                raise _Refused(
                    f"{prog.origin}: MSCCLProgram: the collective has {coll.num_ranks} ranks, the "
                    f"topology {prog.num_ranks}"
                )
            return coll._weft_collective()
        return self._custom_collective()

    def _custom_collective(self):
        """A Collective subclass: its precondition is what init_buffers put in the inputs; its
        postcondition, the final contents of the output chunks its check() reads, once check()
        has accepted them (check()'s own lines go to stderr, as the XML owns stdout)."""
        prog = self.prog
        where = prog.origin
        n = prog.num_ranks
        initial = prog._initial
        if len(initial) != n:
            raise _Refused(f"{where}: init_buffers gave {len(initial)} ranks, the topology has {n}")
        leaf = {}  # a start chunk (as MSCCLang compares them) -> Weft's (rank, input index)
        holds = set()
        inputs, outputs = [], []
        # In place: init_buffers gave a rank one list as both input and output, so that the
        # program's writes to the output are its input's (Weft's in-place custom collective: output
        # chunk k is input chunk k). Weft's calls are in place on every rank or on none.
        in_place = [
            Buffer.input in per_rank and Buffer.output in per_rank
            and per_rank[Buffer.input] is per_rank[Buffer.output]
            for per_rank in prog.buffers
        ]
        if any(in_place) and not all(in_place):
            ranks = ", ".join(str(r) for r in range(n) if in_place[r])
            raise _Refused(
                f"{where}: init_buffers makes input and output one buffer on rank(s) {ranks} "
                "only; Weft's custom collectives are in place on every rank or on none"
            )
        for r, per_rank in enumerate(initial):
            if Buffer.input not in per_rank or Buffer.output not in per_rank:
                raise _Refused(f"{where}: init_buffers must give rank {r} an input and an output")
            inputs.append(len(per_rank[Buffer.input]))
            outputs.append(len(per_rank[Buffer.output]))
            for k, c in enumerate(per_rank[Buffer.input]):
                if c is None:
                    continue
                if type(c) is not Chunk or c in leaf:
                    raise _Refused(
                        f"{where}: input chunk {k} of rank {r} at the start is {c}: Weft needs "
                        "each input chunk to start as a distinct Chunk"
                    )
                leaf[c] = (r, k)
                holds.add((r, k))
            if not in_place[r] and any(c is not None for c in per_rank[Buffer.output]):
                raise _Refused(f"{where}: rank {r}'s output holds data at the start; Weft's "
                               "custom collectives start with data in the inputs only")
        read = self._check_reads()
        postcondition = {}
        for r in range(n):
            final = prog.buffers[r][Buffer.output]
            for k in range(len(final)):
                if (r, k) not in read or final[k] is None:
                    continue
                chunks = final[k].chunks if type(final[k]) is ReduceChunk else [final[k]]
                try:
                    postcondition[(r, k)] = [leaf[c] for c in chunks]
                except KeyError:
                    raise _Refused(f"{where}: rank {r} output[{k}] ends with {final[k]}, which "
                                   "names no input chunk of init_buffers")
        try:
            return _weft.Collective.custom(
                _custom_name(prog.collective),
                n, inputs, outputs, holds, postcondition, in_place=all(in_place),
            )
        except _weft.DslError as e:
            raise _Refused(f"{where}: {type(prog.collective).__name__}: {e.reason}")

    def _check_reads(self):
        """Runs the collective's check() with the outputs watched: the output chunks it reads are
        the ones the postcondition specifies. Refuses when check() fails."""
        prog = self.prog
        read = set()
        saved = []
        for r, per_rank in enumerate(prog.buffers):
            saved.append(per_rank[Buffer.output])
            per_rank[Buffer.output] = _WatchedList(per_rank[Buffer.output], r, read)
        said = io.StringIO()
        try:
            with contextlib.redirect_stdout(said):
                ok = prog.collective.check(prog)
        finally:
            for r, per_rank in enumerate(prog.buffers):
                per_rank[Buffer.output] = saved[r]
        if not ok:
            raise _Refused(
                f"{prog.origin}: {type(prog.collective).__name__}.check() fails on what the "
                "program computes:\n" + said.getvalue().rstrip()
            )
        if not read:  # check() looked some other way: every output chunk that holds data
            read = {(r, k) for r in range(len(prog.buffers))
                    for k in range(len(prog.buffers[r][Buffer.output]))}
        return read


def _custom_name(collective):
    # msccl-tools names every custom collective "custom"; the class's name says more in reports.
    name = getattr(collective, "name", "")
    if isinstance(name, str) and name and name != "custom":
        return name
    return type(collective).__name__


class _WatchedList(list):
    def __init__(self, items, rank, read):
        super().__init__(items)
        self._rank = rank
        self._read = read

    def __getitem__(self, index):
        if isinstance(index, slice):
            for k in range(*index.indices(len(self))):
                self._read.add((self._rank, k))
        else:
            self._read.add((self._rank, index if index >= 0 else len(self) + index))
        return super().__getitem__(index)

    def __iter__(self):
        for k in range(len(self)):
            self._read.add((self._rank, k))
        return super().__iter__()


class _Refused(Exception):
    pass


__all__ = [
    "Buffer", "BufferSlice", "Check", "Chunk", "ChunkRef", "Collective", "MSCCLProgram", "Print",
    "ReduceChunk", "Ref", "ReplicationPolicy", "ThreadblockPolicy", "XML", "chunk",
    "create_scratch", "dataclass", "field", "AllGather", "AllReduce", "AllToAll", "Broadcast",
    "ReduceScatter",
]

# Keep dataclasses referenced for programs that use dataclasses.field via our star export.
_ = dataclasses
