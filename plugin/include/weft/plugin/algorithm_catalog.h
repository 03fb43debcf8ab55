// The algorithms a process offers to its communicators: every XML file the configuration names,
// read and validated once, in the order selection tries them. Every rank computes the same
// order from the same files, which is what makes all ranks pick the same algorithm for a call.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/plugin/shim_config.h"

namespace weft::plugin {

struct CatalogEntry {
  std::string path;
  ir::Algorithm algorithm;
};

struct Catalog {
  std::vector<CatalogEntry> entries;  // in selection order
  // One message per file (or folder) that was skipped: the path and every finding, each with
  // file:line and the element path, as validation reports them.
  std::vector<std::string> skipped;
  // Entries of an algorithm folder that were not read, and why (not *.xml, a FIFO, a dangling
  // link, a loop of links): the shim names them at INFO.
  std::vector<std::string> ignored;
};

// The files named by `config`: each folder's *.xml and each listed file, without duplicates
// (same canonical path), sorted by file name and then by full path so that the order depends on
// neither the folder's listing order nor the order of the variables. Unreadable folders and
// missing files land in `problems`, folder entries that are not read in `ignored` (when given).
// Never throws for what the file system answers.
std::vector<std::string> list_algorithm_files(const ShimConfig& config,
                                              std::vector<std::string>& problems,
                                              std::vector<std::string>* ignored = nullptr);

// Reads and validates (limits profile `weft`) every file; bad files are skipped, never fatal.
Catalog load_catalog(std::span<const std::string> files);

// Both of the above; folder and file problems are added to Catalog::skipped.
Catalog load_catalog(const ShimConfig& config);

}  // namespace weft::plugin
