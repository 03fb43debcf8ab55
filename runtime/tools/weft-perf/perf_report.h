// weft-perf's table: nccl-tests' columns (size, count, type, redop, root, then time, algbw, busbw
// and #wrong for out-of-place and in-place) plus the device-memory traffic of the call and the
// fraction of the device's measured copy bandwidth it achieved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/ir/ir.h"
#include "weft/ir/types.h"

namespace weft::perf {

struct ModeResult {
  bool ran = false;          // false: the algorithm does not support this mode ("N/A")
  double time_us = 0;        // per call
  double algbw_gbs = 0;      // bytes / time
  double busbw_gbs = 0;      // algbw × bus factor
  long long wrong = 0;       // elements differing from the CPU reference; -1: not checked
  double copy_fraction = 0;  // (traffic / time) / measured copy bandwidth
};

// algbw, busbw and the copy-bandwidth fraction of one measurement.
ModeResult measure(std::size_t bytes, double time_us, double bus_factor,
                   std::uint64_t traffic_bytes, double copy_bandwidth_gbs, long long wrong);

struct Row {
  std::size_t bytes = 0;
  std::size_t count = 0;  // elements (count × m, as nccl-tests prints)
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  int root = -1;
  std::uint64_t traffic_bytes = 0;
  ModeResult out_of_place;
  ModeResult in_place;
};

std::string table_header();
std::string format_row(const Row& row);
// "# Out of bounds values : 0 OK" and "# Avg bus bandwidth    : 12.3".
std::string table_footer(long long wrong_total, double average_busbw_gbs);

}  // namespace weft::perf
