from weft.mscclang.core import ReplicationPolicy, ThreadblockPolicy  # noqa: F401
