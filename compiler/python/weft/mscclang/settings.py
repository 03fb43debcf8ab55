"""The settings of one run of `python3 -m weft.mscclang`: what its options ask of every XML() and
Check() the program makes (the limits profile, the byte range, the executor's seeds, and what
--info prints)."""

from dataclasses import dataclass


@dataclass
class Settings:
    limits: str = "msccl"  # limits profile the XML must obey
    min_bytes: int = 0
    max_bytes: int = 0  # 0: unbounded
    seeds: int = 0  # executor seeds per case; 0: Weft's default
    # The machine predicted time judges schedules on: a preset or an NCCL topology file (empty:
    # a100-nvswitch), nodes and GPUs per node (0: from the program's ranks).
    topology: str = ""
    nodes: int = 0
    gpus_per_node: int = 0
    # When set, XML() also hands its CompileResult here, and Check() its answer (the runner's
    # --info prints them).
    on_result: object = None
    on_check: object = None


# The run in progress reads these; weft.mscclang.run() swaps in the settings it was given and
# restores the previous ones after the script.
current = Settings()
