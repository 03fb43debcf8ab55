from weft.mscclang.chunks import Chunk, ReduceChunk, dataclass  # noqa: F401
