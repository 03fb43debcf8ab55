"""MSCCLang's collectives (msccl.language.collectives): the five Weft knows by name, each with the
buffers it starts from and the check() it ends with, as msccl-tools defines them, and Collective,
the base of a program's own (which Weft replays as a custom collective, replay.py)."""

import weft._weft as _weft
from weft.mscclang.buffers import Buffer
from weft.mscclang.chunks import Chunk, ReduceChunk


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


# The collectives Weft compiles by name; any other Collective is replayed as a custom one.
BUILT_IN = (AllToAll, AllGather, AllReduce, ReduceScatter, Broadcast)
