#include "element_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "weft/ir/half_float.h"

namespace weft::cpu::detail {

namespace {

// How a type is stored and what it computes in.
template <class T>
struct NativeCodec {
  using Storage = T;
  using Compute = T;
  static Compute decode(Storage s) { return s; }
  static Storage encode(Compute c) { return c; }
};

struct HalfCodec {
  using Storage = std::uint16_t;
  using Compute = float;
  static float decode(std::uint16_t s) { return half_to_float(s); }
  static std::uint16_t encode(float c) { return float_to_half(c); }
};

struct Bfloat16Codec {
  using Storage = std::uint16_t;
  using Compute = float;
  static float decode(std::uint16_t s) { return bfloat16_to_float(s); }
  static std::uint16_t encode(float c) { return float_to_bfloat16(c); }
};

// Integer arithmetic in the unsigned type of the same width: wrapping, and no undefined
// behaviour. Types narrower than unsigned int are widened first so that the product cannot
// overflow a promoted signed int.
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct SumOp {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(
          static_cast<std::make_unsigned_t<T>>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(
          static_cast<std::make_unsigned_t<T>>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b)));
    } else {
      return a * b;
    }
  }
};

struct MaxOp {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return a < b ? b : a;
  }
};

struct MinOp {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return b < a ? b : a;
  }
};

template <class Codec>
typename Codec::Storage load(const std::byte* p) {
  typename Codec::Storage s;
  std::memcpy(&s, p, sizeof s);
  return s;
}

template <class Codec>
void store(std::byte* p, typename Codec::Storage s) {
  std::memcpy(p, &s, sizeof s);
}

template <class Codec, class Op>
void combine(std::byte* out, const std::byte* a, const std::byte* b, std::size_t n) {
  constexpr std::size_t size = sizeof(typename Codec::Storage);
  for (std::size_t k = 0; k < n; ++k) {
    const auto x = Codec::decode(load<Codec>(a + k * size));
    const auto y = Codec::decode(load<Codec>(b + k * size));
    store<Codec>(out + k * size, Codec::encode(Op::template apply<typename Codec::Compute>(x, y)));
  }
}

template <class Codec>
void scale(std::byte* data, std::size_t n, double factor) {
  using Compute = typename Codec::Compute;
  constexpr std::size_t size = sizeof(typename Codec::Storage);
  if constexpr (std::is_floating_point_v<Compute>) {
    const auto f = static_cast<Compute>(factor);
    for (std::size_t k = 0; k < n; ++k) {
      std::byte* p = data + k * size;
      store<Codec>(p, Codec::encode(Codec::decode(load<Codec>(p)) * f));
    }
  }
}

template <class Codec>
long double value(const std::byte* element) {
  return static_cast<long double>(Codec::decode(load<Codec>(element)));
}

template <class Codec>
void store_real(std::byte* element, double v) {
  using Compute = typename Codec::Compute;
  if constexpr (std::is_floating_point_v<Compute>) {
    store<Codec>(element, Codec::encode(static_cast<Compute>(v)));
  } else {
    store<Codec>(element, static_cast<Compute>(static_cast<std::int64_t>(v)));
  }
}

template <class Codec>
void store_bits(std::byte* element, std::uint64_t bits) {
  using Storage = typename Codec::Storage;
  // Conversion to a narrower integer is modular (C++20): the low bits.
  if constexpr (std::is_integral_v<Storage>) store<Codec>(element, static_cast<Storage>(bits));
}

template <class Codec>
std::string format(const std::byte* element) {
  const auto v = Codec::decode(load<Codec>(element));
  if constexpr (std::is_floating_point_v<decltype(v)>) {
    return fmt::format("{:.9g}", static_cast<double>(v));
  } else if constexpr (std::is_signed_v<decltype(v)>) {
    return fmt::format("{}", static_cast<std::int64_t>(v));
  } else {
    return fmt::format("{}", static_cast<std::uint64_t>(v));
  }
}

template <class Codec>
std::optional<ElementOps> make_ops(DataType type, ReduceOp op) {
  constexpr bool floating = std::is_floating_point_v<typename Codec::Compute>;
  ElementOps ops;
  ops.type = type;
  ops.op = op;
  ops.size = sizeof(typename Codec::Storage);
  switch (op) {
    case ReduceOp::Sum:
      ops.combine = &combine<Codec, SumOp>;
      break;
    case ReduceOp::Prod:
      ops.combine = &combine<Codec, ProdOp>;
      break;
    case ReduceOp::Max:
      ops.combine = &combine<Codec, MaxOp>;
      break;
    case ReduceOp::Min:
      ops.combine = &combine<Codec, MinOp>;
      break;
    case ReduceOp::Avg:
      if (!floating) return std::nullopt;
      ops.combine = &combine<Codec, SumOp>;
      break;
  }
  ops.scale = &scale<Codec>;
  ops.value = &value<Codec>;
  ops.store_real = &store_real<Codec>;
  ops.store_bits = &store_bits<Codec>;
  ops.format = &format<Codec>;
  return ops;
}

std::byte poison_byte(DataType type) {
  return is_floating(type) ? std::byte{0xFF} : std::byte{0xA5};
}

}  // namespace

std::optional<ElementOps> element_ops(DataType type, ReduceOp op) {
  switch (type) {
    case DataType::Int8:
      return make_ops<NativeCodec<std::int8_t>>(type, op);
    case DataType::Uint8:
      return make_ops<NativeCodec<std::uint8_t>>(type, op);
    case DataType::Int32:
      return make_ops<NativeCodec<std::int32_t>>(type, op);
    case DataType::Uint32:
      return make_ops<NativeCodec<std::uint32_t>>(type, op);
    case DataType::Int64:
      return make_ops<NativeCodec<std::int64_t>>(type, op);
    case DataType::Uint64:
      return make_ops<NativeCodec<std::uint64_t>>(type, op);
    case DataType::Half:
      return make_ops<HalfCodec>(type, op);
    case DataType::Float:
      return make_ops<NativeCodec<float>>(type, op);
    case DataType::Double:
      return make_ops<NativeCodec<double>>(type, op);
    case DataType::Bfloat16:
      return make_ops<Bfloat16Codec>(type, op);
  }
  return std::nullopt;
}

void fill_poison(DataType type, std::span<std::byte> bytes) {
  std::fill(bytes.begin(), bytes.end(), poison_byte(type));
}

bool is_poison(DataType type, const std::byte* element) {
  const std::byte pattern = poison_byte(type);
  return std::all_of(element, element + size_of(type),
                     [pattern](std::byte b) { return b == pattern; });
}

double unit_roundoff(DataType type) {
  switch (type) {
    case DataType::Half:
      return std::ldexp(1.0, -11);
    case DataType::Bfloat16:
      return std::ldexp(1.0, -8);
    case DataType::Float:
      return std::ldexp(1.0, -24);
    case DataType::Double:
      return std::ldexp(1.0, -53);
    default:
      return 0.0;
  }
}

double smallest_subnormal(DataType type) {
  switch (type) {
    case DataType::Half:
      return std::ldexp(1.0, -24);
    case DataType::Bfloat16:
      return std::ldexp(1.0, -133);
    case DataType::Float:
      return static_cast<double>(std::numeric_limits<float>::denorm_min());
    case DataType::Double:
      return std::numeric_limits<double>::denorm_min();
    default:
      return 0.0;
  }
}

}  // namespace weft::cpu::detail
