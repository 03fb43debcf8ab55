// Reading a whole file that someone else named (an environment variable, a folder of algorithm
// files, a command line) without letting it block, exhaust memory or throw.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

namespace weft::ir {

struct FileReadPolicy {
  // Larger files are refused before anything is allocated (a sparse 64 GiB file costs nothing
  // to make and would otherwise end the process).
  std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
  // Only regular files, opened without blocking: a FIFO, a device (/dev/zero) or a directory is
  // refused at once. Off for files a user names on a command line, where reading a pipe is
  // meant.
  bool regular_only = true;
};

// The largest algorithm file the NCCL shim and the GPU runtime read: a hundred times the largest
// real MSCCL file seen (ndv4/ap4ll.xml, 640 KB), because Weft's own files for many ranks are
// larger.
inline constexpr std::uint64_t kAlgorithmFileMaxBytes = std::uint64_t{64} << 20;

struct TextFile {
  std::string text;
  std::string error;  // empty on success: "is a FIFO, not a regular file", "No such file ..."
  bool ok() const { return error.empty(); }
};

// The whole file, or the reason it cannot be had (the system's words for a failed call). Never
// throws, never blocks on a FIFO or a device when `policy.regular_only`.
TextFile read_text_file(const std::string& path, const FileReadPolicy& policy);

// `text` without a UTF-8 byte order mark at its start.
std::string_view strip_utf8_bom(std::string_view text);

// Writes `text` to `path` so that a reader (or a crash) never sees half a file: beside the target
// first, then renamed over it. False, with `error` saying what failed and where, otherwise.
bool write_text_file(const std::string& path, std::string_view text, std::string* error);

// Appends one piece of a file's text.
using TextSink = std::function<void(std::string_view piece)>;
// The same, for text made in pieces: `produce` is called once and hands each piece, in order, to
// the sink it is given. A file of tens of megabytes is then never held whole in memory.
bool write_text_file(const std::string& path, const std::function<void(const TextSink&)>& produce,
                     std::string* error);

}  // namespace weft::ir
