"""MSCCLang (msccl.language): programs, chunk references, buffers, XML() and Check(), traced in
Python and compiled and verified by Weft (weft.mscclang: the program in core.py, the rest in
modules named as msccl-tools names them)."""

from typing import Union  # noqa: F401  (msccl-tools' star import gives it)
from enum import Enum  # noqa: F401

from weft.mscclang.buffers import Buffer, BufferSlice  # noqa: F401
from weft.mscclang.chunks import Chunk, ReduceChunk  # noqa: F401
from weft.mscclang.core import (  # noqa: F401
    Check,
    ChunkRef,
    MSCCLProgram,
    Print,
    Ref,
    XML,
    chunk,
    create_scratch,
    dataclass,
    field,
)
from weft.mscclang.policies import ReplicationPolicy, ThreadblockPolicy  # noqa: F401
