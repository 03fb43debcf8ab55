#include "command_line.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "weft/ir/edit_distance.h"
#include "weft/program/options.h"

namespace weft::weftc {
namespace {

// The candidate nearest to `word`: within two edits, or one that starts with it or it starts
// with ("--rank" and "--ranks"). Empty when none is near.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    std::size_t d = ir::edit_distance(word, candidate);
    const bool prefix =
        word.size() >= 3 && (candidate.starts_with(word) || word.starts_with(candidate));
    if (prefix) d = std::min<std::size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& name) {
  return name.empty() ? std::string() : fmt::format("; did you mean '{}'?", name);
}

bool is_option(std::string_view word) {
  // "-1" and "-0.5" are values (a negative number after an option), not options.
  return word.size() >= 2 && word[0] == '-' && !(word[1] >= '0' && word[1] <= '9') &&
         word[1] != '.';
}

// Every spelling of every option of `command`, with its dashes: "--ranks", "-o".
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

}  // namespace

CLI::Validator whole_number(std::int64_t min, std::int64_t max, const std::string& what) {
  return CLI::Validator(
      [min, max, what](std::string& input) -> std::string {
        std::int64_t value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, error] = std::from_chars(input.data(), end, value);
        if (error != std::errc() || stop != end || value < min || value > max) {
          return fmt::format("'{}': {} must be a whole number from {} to {}", input, what, min,
                             max);
        }
        return {};
      },
      fmt::format("{}..{}", min, max));
}

CLI::Validator percent(double min, double max, const std::string& what) {
  return CLI::Validator(
      [min, max, what](std::string& input) -> std::string {
        double value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, error] = std::from_chars(input.data(), end, value);
        if (error != std::errc() || stop != end || !(value >= min && value <= max)) {
          return fmt::format("'{}': {} must be a percent from {:g} to {:g}", input, what, min, max);
        }
        return {};
      },
      "PERCENT");
}

std::optional<std::uint64_t> size_in_bytes(const std::string& text, bool zero) {
  constexpr std::uint64_t kMost = std::uint64_t{1} << 40;
  const std::optional<std::size_t> bytes = gpu::parse_byte_size(text);
  if (!bytes || *bytes > kMost || (*bytes == 0 && !zero)) return std::nullopt;
  return static_cast<std::uint64_t>(*bytes);
}

CLI::Validator byte_size(const std::string& what, bool zero) {
  return CLI::Validator(
      [what, zero](std::string& input) -> std::string {
        const std::optional<std::uint64_t> bytes = size_in_bytes(input, zero);
        if (!bytes) {
          return fmt::format(
              "'{}': {} must be a size from {} to 1024G (digits with an optional K, M "
              "or G, powers of 1024)",
              input, what, zero ? 0 : 1);
        }
        input = std::to_string(*bytes);
        return {};
      },
      "SIZE");
}

std::optional<std::string> misspelling(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands({})) commands.push_back(command->get_name());
  const CLI::App* command = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") return std::nullopt;
    if (command == nullptr) {
      if (is_option(word)) {
        const std::string name(word.substr(0, word.find('=')));
        const std::vector<std::string> names = option_names(app);
        if (std::find(names.begin(), names.end(), name) == names.end()) {
          return fmt::format("weftc has no option '{}'{} (weftc --help lists the commands)", name,
                             did_you_mean(nearest(name, names)));
        }
        continue;
      }
      const auto found = std::find(commands.begin(), commands.end(), word);
      if (found == commands.end()) {
        return fmt::format("'{}' is not a weftc command{} (the commands: {})", word,
                           did_you_mean(nearest(word, commands)), fmt::join(commands, ", "));
      }
      command = app.get_subcommand(std::string(word));
      continue;
    }
    if (!is_option(word)) continue;
    const std::string name(word.substr(0, word.find('=')));
    const std::vector<std::string> names = option_names(*command);
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    // A short option with its value attached ("-o8", "-bK") is CLI11's to read.
    if (name.size() > 2 && name[1] != '-' &&
        std::find(names.begin(), names.end(), name.substr(0, 2)) != names.end()) {
      continue;
    }
    return fmt::format("weftc {} has no option '{}'{} (weftc {} --help lists them)",
                       command->get_name(), name, did_you_mean(nearest(name, names)),
                       command->get_name());
  }
  return std::nullopt;
}

}  // namespace weft::weftc
