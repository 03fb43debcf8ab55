from weft.mscclang.buffers import Buffer, BufferSlice  # noqa: F401
