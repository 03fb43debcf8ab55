from .topology import Topology

__all__ = ["Topology", "fully_connected", "ring", "line", "star", "hub_and_spoke"]


def _links(n, linked):
    return [[1 if src != dst and linked(src, dst) else 0 for src in range(n)] for dst in range(n)]


def fully_connected(num_nodes):
    return Topology(f"FullyConnected(n={num_nodes})", _links(num_nodes, lambda s, d: True))


def ring(num_nodes):
    n = num_nodes
    return Topology(f"Ring(n={n})", _links(n, lambda s, d: (s - d) % n in (1, n - 1)))


def line(num_nodes):
    return Topology(f"Line(n={num_nodes})", _links(num_nodes, lambda s, d: abs(s - d) == 1))


def star(num_nodes, non_blocking=True):
    links = _links(num_nodes, lambda s, d: s == 0 or d == 0)
    switches = []
    if not non_blocking:
        points = list(range(1, num_nodes))
        switches = [([0], points, 1, "to_points"), (points, [0], 1, "from_points")]
    return Topology(f"Star(n={num_nodes})", links, switches)


def hub_and_spoke(num_nodes):
    switches = []
    for node in range(num_nodes):
        others = [o for o in range(num_nodes) if o != node]
        switches += [([node], others, 1, f"node_{node}_out"), (others, [node], 1, f"node_{node}_in")]
    return Topology(f"HubAndSpoke(n={num_nodes})", _links(num_nodes, lambda s, d: True), switches)
