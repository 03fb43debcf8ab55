"""NVIDIA machines by name. Weft's schedule does not depend on them; they give the rank count and
which GPUs are linked (a DGX-1's hybrid cube mesh has no link between, say, GPU 0 and GPU 5)."""

from .topology import Topology


def dgx1():
    # A DGX-1's hybrid cube mesh: two quads, each fully linked, and GPU i linked to GPU i+4. Only
    # connectedness is kept (1 per linked pair): the face uses a topology to refuse copies between
    # unlinked GPUs, as msccl-tools does, not to weigh links.
    def linked(a, b):
        return a != b and (a // 4 == b // 4 or abs(a - b) == 4)

    return Topology("DGX1", [[1 if linked(s, d) else 0 for s in range(8)] for d in range(8)])


def dgx_a100():
    links = [[0 if s == d else 1 for s in range(8)] for d in range(8)]
    return Topology("DGX-A100", links)


def nvlink_only(nvidia_smi_topo=None):
    raise NotImplementedError(
        "nvlink_only() reads nvidia-smi on the machine; Weft's face does not: name the topology "
        "(dgx1(), dgx_a100(), fully_connected(n))")
