from weft.mscclang.policies import ReplicationPolicy, ThreadblockPolicy  # noqa: F401
