// NCCL topology XML reader.
#include "weft/runtime/predict/topology_xml.h"

#include <fmt/format.h>

#include "weft/runtime/text_file.h"

namespace weft::predict {

std::optional<MachineDescription> read_topology_xml(const std::string& path,
                                                    Diagnostics& diagnostics) {
  const ir::TextFile file = ir::read_text_file(path, {});
  if (!file.ok()) {
    diagnostics.error(path, 0, "", fmt::format("cannot read the topology: {}", file.error));
    return std::nullopt;
  }
  return read_topology_xml_text(file.text, path, diagnostics);
}

std::optional<MachineDescription> read_topology_xml_text(std::string_view /*text*/,
                                                         const std::string& source,
                                                         Diagnostics& diagnostics) {
  diagnostics.error(source, 0, "", "NCCL topology files are not read yet; name a preset");
  return std::nullopt;
}

}  // namespace weft::predict
