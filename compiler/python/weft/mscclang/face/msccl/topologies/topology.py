"""A topology as MSCCLang programs use it: how many ranks, and which pairs are linked (a copy or
reduce between unlinked ranks is refused, as msccl-tools refuses it). Weft schedules without it:
bandwidths are only kept."""


class Topology:
    def __init__(self, name, links, switches=()):
        self.name = name
        self.links = links  # links[dst][src]: bandwidth, 0 when not linked
        self.switches = list(switches)
        for _, _, bw, switch_name in self.switches:
            if bw <= 0:
                raise ValueError(f"Switch {switch_name} must have a positive bandwidth, not {bw}")

    def link(self, src, dst):
        return self.links[dst][src]

    def num_nodes(self):
        return len(self.links)

    def nodes(self):
        return range(self.num_nodes())

    def sources(self, dst):
        return (src for src, bw in enumerate(self.links[dst]) if bw > 0)

    def destinations(self, src):
        return (dst for dst, row in enumerate(self.links) if row[src] > 0)
