"""MSCCLang's policies (msccl.language.types): how a program's threadblocks are placed and how its
instances are laid out."""

from enum import Enum


class ThreadblockPolicy(Enum):
    auto = "auto"
    manual = "manual"

    def __str__(self):
        return self.value


class ReplicationPolicy(Enum):
    duplicated = "duplicated"
    interleaved = "interleaved"
    packed = "packed"
    none = "none"

    def __str__(self):
        return self.value
