#include "reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "weft/ir/geometry.h"

namespace weft::perf {

CallLayout call_layout(const ir::Algorithm& algo, int rank, std::size_t count,
                       std::size_t element_bytes, bool in_place) {
  CallLayout layout;
  layout.in_place = in_place;
  const std::size_t m = static_cast<std::size_t>(std::max(ir::count_multiplier(algo), 1));
  const auto chunks = static_cast<std::size_t>(std::max(algo.nchunksperloop, 1));
  const std::size_t chunk = count * m / chunks;
  const auto input =
      static_cast<std::size_t>(ir::input_extent_chunks(algo, rank)) * chunk * element_bytes;
  const auto output =
      static_cast<std::size_t>(ir::output_extent_chunks(algo, rank)) * chunk * element_bytes;
  const std::size_t block = static_cast<std::size_t>(rank) * count * element_bytes;
  if (!in_place) {
    layout.send_bytes = input;
    layout.recv_bytes = output;
    return layout;
  }
  switch (algo.collective) {
    case ir::Collective::AllGather:
      layout.recv_bytes = output;
      layout.send_offset = block;
      break;
    case ir::Collective::ReduceScatter:
      layout.recv_bytes = input;
      layout.recv_offset = block;
      break;
    default:
      layout.recv_bytes = input;
      break;
  }
  return layout;
}

Reference compute_reference(const cpu::Executor& executor, std::size_t chunk_elements,
                            DataType dtype, ReduceOp op, int root, bool in_place) {
  Reference reference;
  cpu::RunOptions options;
  options.chunk_elements = chunk_elements;
  options.tile_elements = chunk_elements;  // results do not depend on T: one tile is fastest
  options.fifo_depth = 0;                  // unbounded: the reference never deadlocks on depth
  options.dtype = dtype;
  options.op = op;
  options.root = root;
  options.in_place = in_place;
  reference.initial = executor.make_inputs(options);
  if (reference.initial.empty()) {
    reference.error = "the CPU executor cannot lay out this algorithm's buffers";
    return reference;
  }
  reference.expected = reference.initial;
  const cpu::RunResult result = executor.execute(options, reference.expected);
  if (result.outcome != cpu::Outcome::Pass) reference.error = result.report();
  return reference;
}

const std::vector<std::byte>& device_image(const cpu::RankBuffers& buffers, bool in_place) {
  if (!in_place) return buffers.output;
  return buffers.output.empty() ? buffers.input : buffers.output;
}

const std::vector<std::byte>& send_image(const cpu::RankBuffers& buffers) {
  return buffers.input;
}

namespace {

double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double value;
  if (exponent == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -value : value;
}

double bfloat16_to_double(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  return static_cast<double>(std::bit_cast<float>(bits));
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double as_double(DataType dtype, const std::byte* p) {
  switch (dtype) {
    case DataType::Half:
      return half_to_double(load<std::uint16_t>(p));
    case DataType::Bfloat16:
      return bfloat16_to_double(load<std::uint16_t>(p));
    case DataType::Float:
      return static_cast<double>(load<float>(p));
    case DataType::Double:
      return load<double>(p);
    default:
      return 0;
  }
}

double tolerance(DataType dtype) {
  switch (dtype) {
    case DataType::Half:
      return 1e-2;
    case DataType::Bfloat16:
      return 5e-2;
    case DataType::Float:
      return 1e-5;
    default:
      return 1e-12;
  }
}

}  // namespace

std::size_t count_wrong(DataType dtype, std::span<const std::byte> expected,
                        std::span<const std::byte> found) {
  const std::size_t element = size_of(dtype);
  if (element == 0) return 0;
  const std::size_t n = std::min(expected.size(), found.size()) / element;
  std::size_t wrong =
      (std::max(expected.size(), found.size()) - std::min(expected.size(), found.size())) / element;
  const bool floating = is_floating(dtype);
  const double tol = tolerance(dtype);
  for (std::size_t k = 0; k < n; ++k) {
    const std::byte* e = expected.data() + k * element;
    const std::byte* f = found.data() + k * element;
    if (std::memcmp(e, f, element) == 0) continue;
    if (!floating) {
      ++wrong;
      continue;
    }
    const double a = as_double(dtype, e);
    const double b = as_double(dtype, f);
    if (std::isnan(a) && std::isnan(b)) continue;
    const double scale = std::max({std::fabs(a), std::fabs(b), 1e-30});
    if (!(std::fabs(a - b) <= tol * scale)) ++wrong;
  }
  return wrong;
}

}  // namespace weft::perf
