#include "perf_report.h"

#include <fmt/format.h>

namespace weft::perf {

ModeResult measure(std::size_t bytes, double time_us, double bus_factor,
                   std::uint64_t traffic_bytes, double copy_bandwidth_gbs, long long wrong) {
  ModeResult r;
  r.ran = true;
  r.time_us = time_us;
  r.wrong = wrong;
  if (time_us > 0) {
    r.algbw_gbs = static_cast<double>(bytes) / (time_us * 1e3);
    r.busbw_gbs = r.algbw_gbs * bus_factor;
    if (copy_bandwidth_gbs > 0) {
      r.copy_fraction = static_cast<double>(traffic_bytes) / (time_us * 1e3) / copy_bandwidth_gbs;
    }
  }
  return r;
}

std::string table_header() {
  return fmt::format(
      "#\n"
      "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:^42}   {:^42}   {:>12}\n"
      "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:>9} {:>8} {:>8} {:>6} {:>7}   {:>9} {:>8} {:>8} "
      "{:>6} {:>7}   {:>12}\n"
      "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:>9} {:>8} {:>8} {:>6} {:>7}   {:>9} {:>8} {:>8} "
      "{:>6} {:>7}   {:>12}\n",
      "", "", "", "", "", "out-of-place", "in-place", "", "size", "count", "type", "redop", "root",
      "time", "algbw", "busbw", "#wrong", "copybw", "time", "algbw", "busbw", "#wrong", "copybw",
      "devbytes", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(%)", "(us)",
      "(GB/s)", "(GB/s)", "", "(%)", "(B)");
}

namespace {
std::string mode_columns(const ModeResult& m) {
  if (!m.ran)
    return fmt::format("{:>9} {:>8} {:>8} {:>6} {:>7}", "N/A", "N/A", "N/A", "N/A", "N/A");
  const std::string wrong = m.wrong < 0 ? std::string("N/A") : fmt::format("{}", m.wrong);
  return fmt::format("{:>9.2f} {:>8.2f} {:>8.2f} {:>6} {:>7.1f}", m.time_us, m.algbw_gbs,
                     m.busbw_gbs, wrong, 100.0 * m.copy_fraction);
}
}  // namespace

std::string format_row(const Row& row) {
  return fmt::format("  {:>10} {:>12} {:>8} {:>6} {:>5}   {}   {}   {:>12}\n", row.bytes, row.count,
                     to_string(row.dtype), to_string(row.op), row.root,
                     mode_columns(row.out_of_place), mode_columns(row.in_place), row.traffic_bytes);
}

std::string table_footer(long long wrong_total, double average_busbw_gbs) {
  return fmt::format("# Out of bounds values : {} {}\n# Avg bus bandwidth    : {:.4f}\n#\n",
                     wrong_total, wrong_total == 0 ? "OK" : "FAILED", average_busbw_gbs);
}

}  // namespace weft::perf
