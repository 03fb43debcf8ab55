// NCCL's topology XML: what NCCL_TOPO_DUMP_FILE writes (cpu -> pci switches -> gpu with nvlink
// children, nic/net) and the partial files people give NCCL_TOPO_FILE (PCI only, no NVLink, no
// NIC speed). What a file leaves unknown is either assumed, with a sentence in the machine's
// assumptions saying what and why, or an error; never guessed silently.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "weft/ir/diagnostics.h"
#include "weft/predict/topology_builder.h"

namespace weft::predict {

// One machine from the file at `path`; errors (file:line and why) go to `diagnostics`, and then
// there is no machine.
std::optional<MachineDescription> read_topology_xml(const std::string& path,
                                                    Diagnostics& diagnostics);
// The same from text, `source` naming it in diagnostics.
std::optional<MachineDescription> read_topology_xml_text(std::string_view text,
                                                         const std::string& source,
                                                         Diagnostics& diagnostics);

}  // namespace weft::predict
