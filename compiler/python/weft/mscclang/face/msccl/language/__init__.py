"""MSCCLang (msccl.language): programs, chunk references, buffers, XML() and Check(), traced in
Python and compiled and verified by Weft (weft.mscclang.core)."""

from typing import Union  # noqa: F401  (msccl-tools' star import gives it)
from enum import Enum  # noqa: F401

from weft.mscclang.core import (  # noqa: F401
    Buffer,
    BufferSlice,
    Check,
    Chunk,
    ChunkRef,
    MSCCLProgram,
    Print,
    ReduceChunk,
    Ref,
    ReplicationPolicy,
    ThreadblockPolicy,
    XML,
    chunk,
    create_scratch,
    dataclass,
    field,
)
