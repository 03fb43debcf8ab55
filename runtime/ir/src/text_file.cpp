#include "weft/ir/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <system_error>

#include <fmt/format.h>

namespace weft::ir {
namespace {

std::string system_error_text(int error) {
  return std::generic_category().message(error);
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every path out.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

TextFile read_text_file(const std::string& path, const FileReadPolicy& policy) {
  TextFile file;
  int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
  // Non-blocking open: opening a FIFO with no writer would otherwise wait forever.
  if (policy.regular_only) flags |= O_NONBLOCK;
  Descriptor fd(::open(path.c_str(), flags));
  if (fd.get() < 0) {
    file.error = system_error_text(errno);
    return file;
  }
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    file.error = system_error_text(errno);
    return file;
  }
  const bool regular = S_ISREG(status.st_mode);
  if (policy.regular_only && !regular) {
    file.error = std::string("is ") + file_kind(status.st_mode) + ", not a regular file";
    return file;
  }
  if (S_ISDIR(status.st_mode)) {
    file.error = "is a directory";
    return file;
  }
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (regular && size > policy.max_bytes) {
    file.error = "is " + std::to_string(size) + " bytes, more than the " +
                 std::to_string(policy.max_bytes) + " a file here may have";
    return file;
  }
  try {
    if (regular) file.text.reserve(static_cast<std::size_t>(size));
    char buffer[1 << 16];
    for (;;) {
      const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
      if (got == 0) break;
      if (got < 0) {
        if (errno == EINTR) continue;
        file.error = system_error_text(errno);
        file.text.clear();
        return file;
      }
      // A file that grows while read, or a stream, is held to the same limit.
      if (file.text.size() + static_cast<std::size_t>(got) > policy.max_bytes) {
        file.error = "holds more than the " + std::to_string(policy.max_bytes) +
                     " bytes a file here may have";
        file.text.clear();
        return file;
      }
      file.text.append(buffer, static_cast<std::size_t>(got));
    }
  } catch (const std::bad_alloc&) {
    file.text.clear();
    file.text.shrink_to_fit();
    file.error = "is too large to hold in memory";
  }
  return file;
}

std::string_view strip_utf8_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return text;
}

bool write_text_file(const std::string& path, std::string_view text, std::string* error) {
  return write_text_file(
      path, [text](const TextSink& sink) { sink(text); }, error);
}

bool write_text_file(const std::string& path, const std::function<void(const TextSink&)>& produce,
                     std::string* error) {
  const std::string temporary = fmt::format("{}.tmp-{}", path, static_cast<long>(::getpid()));
  auto fail = [&](const std::string& what) {
    if (error != nullptr) *error = fmt::format("{}: {}", path, what);
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return false;
  };
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return fail(fmt::format("cannot create {}: {}", temporary, std::strerror(errno)));
    produce([&out](std::string_view piece) {
      if (out) out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    });
    out.flush();
    if (!out) return fail(fmt::format("cannot write {}: {}", temporary, std::strerror(errno)));
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return fail(fmt::format("cannot rename {} to it: {}", temporary, ec.message()));
  return true;
}

}  // namespace weft::ir
