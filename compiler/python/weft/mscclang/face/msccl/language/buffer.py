from weft.mscclang.core import Buffer, BufferSlice  # noqa: F401
