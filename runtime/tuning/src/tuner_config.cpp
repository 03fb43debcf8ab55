#include "weft/tuning/tuner_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "weft/ir/text_file.h"

namespace weft::tuning {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::optional<long long> parse_integer(std::string_view text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// An integer field that is either −1 (any) or in [min, max].
std::optional<int> parse_bounded(std::string_view text, long long min, long long max) {
  const auto value = parse_integer(text);
  if (!value || (*value != kAnyValue && (*value < min || *value > max))) return std::nullopt;
  return static_cast<int>(*value);
}

bool matches(int rule_value, std::size_t value) {
  return rule_value == kAnyValue || static_cast<std::size_t>(rule_value) == value;
}

}  // namespace

TunerConfig parse_tuner_config(std::string_view text, std::string_view source_name) {
  TunerConfig config;
  // Editors on some systems start a UTF-8 file with a byte order mark; it is not part of the
  // first rule.
  text = ir::strip_utf8_bom(text);
  int line_number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = trim(line);
    if (line.empty()) continue;

    std::vector<std::string> fields;
    for (std::size_t start = 0;;) {
      const auto comma = line.find(',', start);
      fields.push_back(lower(trim(line.substr(start, comma - start))));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    auto problem = [&](std::string reason) {
      config.problems.push_back(
          fmt::format("{}:{}: {} (line ignored)", source_name, line_number, reason));
    };
    if (fields.size() < 8 || fields.size() > 10) {
      problem(fmt::format(
          "expected 8 to 10 comma-separated fields (collective,min_bytes,max_bytes,algorithm,"
          "protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]), found {}",
          fields.size()));
      continue;
    }
    TunerRule rule;
    rule.line = line_number;
    const auto collective = tuner_collective_from_name(fields[0]);
    if (!collective) {
      problem(fmt::format("unknown collective '{}'", fields[0]));
      continue;
    }
    rule.collective = *collective;
    const auto min_bytes = parse_integer(fields[1]);
    const auto max_bytes = parse_integer(fields[2]);
    if (!min_bytes || *min_bytes < 0) {
      problem(fmt::format("min_bytes '{}' is not a non-negative integer", fields[1]));
      continue;
    }
    if (!max_bytes || *max_bytes < kAnyValue) {
      problem(fmt::format("max_bytes '{}' is not a non-negative integer or -1", fields[2]));
      continue;
    }
    rule.min_bytes = static_cast<std::uint64_t>(*min_bytes);
    rule.max_bytes = *max_bytes == kAnyValue ? UINT64_MAX : static_cast<std::uint64_t>(*max_bytes);
    if (rule.max_bytes < rule.min_bytes) {
      problem(fmt::format("max_bytes {} is below min_bytes {}", rule.max_bytes, rule.min_bytes));
      continue;
    }
    const auto algorithm = tuner_algorithm_from_name(fields[3]);
    if (!algorithm) {
      problem(
          fmt::format("unknown algorithm '{}' (one of tree, ring, collnet_direct, "
                      "collnet_chain, nvls, nvls_tree, pat)",
                      fields[3]));
      continue;
    }
    rule.algorithm = *algorithm;
    const auto protocol = tuner_protocol_from_name(fields[4]);
    if (!protocol) {
      problem(fmt::format("unknown protocol '{}' (one of ll, ll128, simple)", fields[4]));
      continue;
    }
    rule.protocol = *protocol;
    struct Field {
      const char* name;
      int* target;
      long long min;
      long long max;
    };
    const Field numeric[] = {{"channels", &rule.channels, 1, 1024},
                             {"nNodes", &rule.nodes, 1, INT32_MAX},
                             {"nRanks", &rule.ranks, 1, INT32_MAX},
                             {"numPipeOps", &rule.pipe_ops, 1, INT32_MAX},
                             {"regBuff", &rule.reg_buff, 0, 1}};
    bool ok = true;
    for (std::size_t k = 0; k < std::size(numeric) && ok; ++k) {
      const std::size_t field = 5 + k;
      if (field >= fields.size()) break;
      const auto value = parse_bounded(fields[field], numeric[k].min, numeric[k].max);
      if (!value) {
        problem(fmt::format("{} '{}' is not -1 or an integer in [{}, {}]", numeric[k].name,
                            fields[field], numeric[k].min, numeric[k].max));
        ok = false;
        break;
      }
      *numeric[k].target = *value;
    }
    if (ok) config.rules.push_back(rule);
  }
  return config;
}

TunerConfig read_tuner_config(const std::string& path) {
  const ir::TextFile file = ir::read_text_file(path, {kTunerFileMaxBytes, true});
  if (!file.ok()) {
    TunerConfig config;
    config.problems.push_back(
        fmt::format("{}: cannot be read ({}); the tuner changes nothing", path, file.error));
    return config;
  }
  TunerConfig config = parse_tuner_config(file.text, path);
  if (config.rules.empty()) {
    config.problems.push_back(
        fmt::format("{}: no rule could be read from it; the tuner changes nothing", path));
  }
  return config;
}

int apply_tuner_rules(const std::vector<TunerRule>& rules, const TunerQuery& query,
                      float* cost_table, int num_algorithms, int num_protocols, int* n_channels) {
  if (cost_table == nullptr || num_algorithms <= 0 || num_protocols <= 0) return -1;
  for (std::size_t k = 0; k < rules.size(); ++k) {
    const TunerRule& rule = rules[k];
    if (rule.collective != query.collective) continue;
    if (query.bytes < rule.min_bytes || query.bytes > rule.max_bytes) continue;
    if (!matches(rule.nodes, query.nodes) || !matches(rule.ranks, query.ranks)) continue;
    if (rule.pipe_ops != kAnyValue && rule.pipe_ops != query.pipe_ops) continue;
    if (rule.reg_buff != kAnyValue && rule.reg_buff != query.reg_buff) continue;
    if (rule.algorithm >= num_algorithms || rule.protocol >= num_protocols) continue;
    float& cost = cost_table[rule.algorithm * num_protocols + rule.protocol];
    // −1 is NCCL's "not possible for this call": forcing it would make NCCL fail or ignore us.
    if (cost < 0.0f) continue;
    cost = 0.0f;
    if (rule.channels != kAnyValue && n_channels != nullptr) *n_channels = rule.channels;
    return static_cast<int>(k);
  }
  return -1;
}

std::string write_tuner_config(const std::vector<TunerLine>& lines) {
  std::string out =
      "# WEFT_TUNER_CONFIG written by weftc tune: the sizes where NCCL's own algorithms are\n"
      "# predicted fastest. Weft's algorithms take the other sizes (WEFT_ALGO_DIR).\n"
      "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n";
  for (const TunerLine& line : lines) {
    out += fmt::format("{},{},{},{},{},{},{},{}  # {}\n", line.collective, line.min_bytes,
                       line.max_bytes == 0 ? std::string("-1") : std::to_string(line.max_bytes),
                       line.algorithm, line.protocol, line.channels, line.nodes, line.ranks,
                       line.comment);
  }
  return out;
}

}  // namespace weft::tuning
