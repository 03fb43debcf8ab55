from .topology import Topology


def _copies(local, copies, remote_bw):
    m = local.num_nodes()
    n = m * copies
    links = [[remote_bw if src // m != dst // m else local.links[dst % m][src % m]
              for src in range(n)] for dst in range(n)]
    switches = [([s + i * m for s in srcs], [d + i * m for d in dsts], bw, f"copy_{i}_{name}_local")
                for srcs, dsts, bw, name in local.switches for i in range(copies)]
    return links, switches


def distributed_fully_connected(local_topology, num_copies, remote_bw):
    links, switches = _copies(local_topology, num_copies, remote_bw)
    return Topology(f"DistributedFullyConnected(local={local_topology.name},copies={num_copies},"
                    f"bw={remote_bw})", links, switches)


def distributed_hub_and_spoke(local_topology, num_copies, remote_bw):
    links, switches = _copies(local_topology, num_copies, remote_bw)
    m = local_topology.num_nodes()
    n = m * num_copies
    for i in range(num_copies):
        local = [j + i * m for j in range(m)]
        remote = [k for k in range(n) if k // m != i]
        switches += [(local, remote, remote_bw, f"copy_{i}_out_remote"),
                     (remote, local, remote_bw, f"copy_{i}_in_remote")]
    return Topology(f"DistributedHubAndSpoke(local={local_topology.name},copies={num_copies},"
                    f"bw={remote_bw})", links, switches)
