#include "weft/plugin/algorithm_catalog.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "weft/ir/validate.h"

namespace weft::plugin {

namespace fs = std::filesystem;

namespace {

bool has_xml_extension(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".xml";
}

std::string canonical_or_same(const fs::path& path) {
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(path, error);
  return error ? path.lexically_normal().string() : canonical.string();
}

// Why a folder entry is not an algorithm file to read, or nothing when it is one.
std::optional<std::string> not_an_algorithm_file(const fs::directory_entry& entry) {
  if (!has_xml_extension(entry.path())) return std::string("not named *.xml");
  std::error_code error;
  const fs::file_status target = entry.status(error);  // follows links
  if (error) {
    const fs::file_status link = entry.symlink_status(error);
    if (!error && fs::is_symlink(link)) return "a link that leads nowhere or loops";
    return "cannot be examined: " + error.message();
  }
  switch (target.type()) {
    case fs::file_type::regular:
      return std::nullopt;
    case fs::file_type::directory:
      return "a folder (folders are not searched)";
    case fs::file_type::fifo:
      return "a FIFO, not a regular file";
    case fs::file_type::character:
    case fs::file_type::block:
      return "a device, not a regular file";
    case fs::file_type::socket:
      return "a socket, not a regular file";
    default:
      return "not a regular file";
  }
}

}  // namespace

std::vector<std::string> list_algorithm_files(const ShimConfig& config,
                                              std::vector<std::string>& problems,
                                              std::vector<std::string>* ignored) {
  // Keyed by canonical path: the same file reached twice (a folder and an explicit list, or a
  // symlink) is loaded once.
  std::map<std::string, std::string> by_canonical;
  for (const std::string& dir : config.algorithm_dirs) {
    std::error_code error;
    fs::directory_iterator it(dir, error);
    if (error) {
      problems.push_back(
          fmt::format("algorithm folder '{}' cannot be read: {}", dir, error.message()));
      continue;
    }
    // Stepped with error codes: a range-for over the iterator throws when a step fails.
    for (; it != fs::directory_iterator(); it.increment(error)) {
      const fs::directory_entry& entry = *it;
      if (const std::optional<std::string> why = not_an_algorithm_file(entry)) {
        if (ignored) {
          ignored->push_back(fmt::format("algorithm folder '{}': not reading '{}': {}", dir,
                                         entry.path().filename().string(), *why));
        }
        continue;
      }
      by_canonical.emplace(canonical_or_same(entry.path()), entry.path().string());
    }
    if (error) {
      problems.push_back(fmt::format("algorithm folder '{}' could not be read to the end: {}", dir,
                                     error.message()));
    }
  }
  for (const std::string& file : config.xml_files) {
    std::error_code error;
    if (!fs::is_regular_file(file, error)) {
      problems.push_back(fmt::format("algorithm file '{}' does not exist or is not a file", file));
      continue;
    }
    by_canonical.emplace(canonical_or_same(file), file);
  }
  std::vector<std::string> files;
  files.reserve(by_canonical.size());
  for (const auto& [canonical, path] : by_canonical) files.push_back(path);
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    const std::string name_a = fs::path(a).filename().string();
    const std::string name_b = fs::path(b).filename().string();
    if (name_a != name_b) return name_a < name_b;
    return a < b;
  });
  return files;
}

Catalog load_catalog(std::span<const std::string> files) {
  Catalog catalog;
  const ir::LimitsProfile limits = ir::weft_limits();
  for (const std::string& path : files) {
    ir::LoadResult loaded = ir::load_xml_file(path, limits);
    if (!loaded.ok()) {
      catalog.skipped.push_back(fmt::format(
          "skipping algorithm file '{}' ({} error{}):\n{}", path, loaded.diagnostics.error_count(),
          loaded.diagnostics.error_count() == 1 ? "" : "s", loaded.diagnostics.str()));
      continue;
    }
    catalog.entries.push_back({path, std::move(*loaded.algorithm)});
  }
  return catalog;
}

Catalog load_catalog(const ShimConfig& config) {
  std::vector<std::string> problems;
  std::vector<std::string> ignored;
  const std::vector<std::string> files = list_algorithm_files(config, problems, &ignored);
  Catalog catalog = load_catalog(files);
  catalog.ignored = std::move(ignored);
  catalog.skipped.insert(catalog.skipped.begin(), problems.begin(), problems.end());
  return catalog;
}

}  // namespace weft::plugin
