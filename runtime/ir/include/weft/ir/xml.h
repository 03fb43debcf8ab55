// MSCCL XML in and out. Reading accepts both dialects (msccl-tools' and the executor's, see
// docs/architecture.md §2.1); writing always produces the executor dialect with every
// attribute present, so Weft's output also loads in MSCCL's executor.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "weft/ir/diagnostics.h"
#include "weft/ir/ir.h"
#include "weft/ir/text_file.h"

namespace weft::ir {

struct ReadResult {
  std::optional<Algorithm> algorithm;  // present when the structure could be read at all
  Diagnostics diagnostics;             // every problem met while reading (not validation)
  bool ok() const { return algorithm.has_value() && !diagnostics.has_errors(); }
};

// `source_name` is used in messages (the file name). Never throws on bad input.
ReadResult read_xml_string(std::string_view text, std::string source_name = "<string>");
// The default policy is for files named by others (an environment variable, a folder): regular
// files of at most kAlgorithmFileMaxBytes, never blocking. weftc reads what its user names with
// kCommandLineFile.
inline constexpr FileReadPolicy kAlgorithmFile{kAlgorithmFileMaxBytes, true};
inline constexpr FileReadPolicy kCommandLineFile{std::numeric_limits<std::uint64_t>::max(), false};
ReadResult read_xml_file(const std::string& path, const FileReadPolicy& policy = kAlgorithmFile);

std::string write_xml(const Algorithm& algo);
// Writes atomically (temporary file + rename); returns false and fills `error` on failure.
bool write_xml_file(const Algorithm& algo, const std::string& path, std::string* error);

}  // namespace weft::ir
