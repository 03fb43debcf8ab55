"""The replay of a traced program into Weft: every copy and reduce the program recorded, with the
line that made it, goes into Weft's C++ DSL under the program's options and the run's settings;
then Weft compiles it and verifies it on the CPU reference executor. A custom collective is first
made Weft's from its init_buffers() and check()."""

import contextlib
import io

import weft._weft as _weft
from weft.mscclang import settings
from weft.mscclang.buffers import Buffer
from weft.mscclang.chunks import Chunk, ReduceChunk
from weft.mscclang.collectives import BUILT_IN
from weft.mscclang.policies import ThreadblockPolicy


class Replay:
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
                min_bytes=settings.current.min_bytes,
                max_bytes=settings.current.max_bytes,
                limits=settings.current.limits,
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
        # What msccl-tools would make of the program is the incumbent: Weft's alternatives replace
        # it only where predicted faster (docs/architecture.md §4.1).
        current = settings.current
        result = _weft.compile(program, current.seeds, msccl_incumbent=True,
                               topology=current.topology, nodes=current.nodes,
                               gpus_per_node=current.gpus_per_node)
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
        if type(coll) in BUILT_IN:
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
