from weft.mscclang.core import Chunk, ReduceChunk, dataclass  # noqa: F401
