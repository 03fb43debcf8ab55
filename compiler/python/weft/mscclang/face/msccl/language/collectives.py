"""MSCCLang's collectives: the four of NCCL that Weft knows by name (and Broadcast), and Collective
for a program's own (init_buffers, check), which Weft replays as a custom collective."""

from msccl.language import *  # noqa: F401,F403
from weft.mscclang.collectives import (  # noqa: F401
    AllGather,
    AllReduce,
    AllToAll,
    Broadcast,
    Collective,
    ReduceScatter,
)
