"""Weft from Python: the DSL and the compiler (weft._weft, C++ through pybind11), and the
MSCCLang face that runs msccl-tools' programs unchanged (``python3 -m weft.mscclang``)."""

from weft._weft import (  # noqa: F401
    Buffer,
    ChannelPolicy,
    ChunkRef,
    Collective,
    CompileError,
    CompileResult,
    DslError,
    Hints,
    Options,
    Program,
    Replication,
    ThreadblockPolicy,
    __version__,
    compile,
    group,
    info,
    input,
    output,
)
