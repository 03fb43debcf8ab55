// What weftc says about a command line before CLI11 parses it, and the range checks of its
// numeric options: messages in the user's words (the nearest command or option to a misspelt
// one; a range a person can read).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace weft::weftc {

// A whole number from `min` to `max`, where `what` says what it counts ("the elements in a tile"):
// "--tile: '0': the elements in a tile must be a whole number from 1 to 1073741824".
CLI::Validator whole_number(std::int64_t min, std::int64_t max, const std::string& what);

// A percent from `min` to `max` (digits, with a fraction where wanted), worded as whole_number:
// "--gap: '60': the optimality gap must be a percent from 0 to 50".
CLI::Validator percent(double min, double max, const std::string& what);

// A size as the command line gives one: digits with an optional K, M or G (powers of 1024, as
// nccl-tests), from 1 byte (0 too where `zero`) to 1024G, past any GPU's memory; nullopt
// otherwise.
std::optional<std::uint64_t> size_in_bytes(const std::string& text, bool zero);
// The option's value as size_in_bytes reads it (`-b 64M`, as the other commands take sizes),
// rewritten to bytes for the option: "--max-bytes: '4Q': a call's largest size must be ...".
CLI::Validator byte_size(const std::string& what, bool zero);

// The first problem CLI11 would word badly: an unknown subcommand (with the nearest name, where
// one is near) or an option its subcommand does not have (with the nearest option). nullopt when
// neither; CLI11 then parses and reports the rest.
std::optional<std::string> misspelling(const CLI::App& app, int argc, const char* const* argv);

}  // namespace weft::weftc
