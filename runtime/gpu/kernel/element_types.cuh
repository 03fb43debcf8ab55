// Element types and reduction operators of the interpreter, computed exactly as the CPU reference
// executor computes them (runtime/cpu/src/element_ops.*): integers wrap (arithmetic in the
// unsigned type), half and bfloat16 go through float and are rounded to nearest even after every
// operation, min and max of floating types return NaN when either operand is NaN. Avg is a sum
// here; its premultiplication by 1/ngpus happens in scale_kernel before the interpreter runs.
#pragma once

#include <cstdint>
#include <type_traits>

#include "portability.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// Storage is what sits in memory (raw bits for half and bfloat16, so that unions and arrays of it
// stay trivial); Compute what arithmetic uses.
template <class S>
struct NativeType {
  using Storage = S;
  using Compute = S;
  __device__ static Compute decode(Storage s) { return s; }
  __device__ static Storage encode(Compute c) { return c; }
};

struct HalfType {
  using Storage = std::uint16_t;
  using Compute = float;
  __device__ static float decode(std::uint16_t s) { return __half2float(__ushort_as_half(s)); }
  __device__ static std::uint16_t encode(float c) { return __half_as_ushort(__float2half_rn(c)); }
};

struct Bfloat16Type {
  using Storage = std::uint16_t;
  using Compute = float;
  __device__ static float decode(std::uint16_t s) {
    return __bfloat162float(__ushort_as_bfloat16(s));
  }
  __device__ static std::uint16_t encode(float c) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(c));
  }
};

template <class T>
using WideUnsigned =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct SumOp {
  template <class C>
  __device__ static C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<std::make_unsigned_t<C>>(static_cast<WideUnsigned<C>>(a) +
                                                                 static_cast<WideUnsigned<C>>(b)));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  template <class C>
  __device__ static C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<std::make_unsigned_t<C>>(static_cast<WideUnsigned<C>>(a) *
                                                                 static_cast<WideUnsigned<C>>(b)));
    } else {
      return a * b;
    }
  }
};

struct MaxOp {
  template <class C>
  __device__ static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      if (isnan(a) || isnan(b)) return a + b;  // NaN, whichever is
    }
    return a < b ? b : a;
  }
};

struct MinOp {
  template <class C>
  __device__ static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      if (isnan(a) || isnan(b)) return a + b;
    }
    return b < a ? b : a;
  }
};

template <class Type, class Op>
__device__ __forceinline__ typename Type::Storage reduce(typename Type::Storage a,
                                                         typename Type::Storage b) {
  return Type::encode(Op::template apply<typename Type::Compute>(Type::decode(a), Type::decode(b)));
}

// Loads through L2 only: the data may have been written by another CTA or GPU since this SM
// last cached the line.
template <class S>
__device__ __forceinline__ S load_cg(const S* p) {
  if constexpr (sizeof(S) == 1) {
    return static_cast<S>(__ldcg(reinterpret_cast<const unsigned char*>(p)));
  } else if constexpr (sizeof(S) == 2) {
    return static_cast<S>(__ldcg(reinterpret_cast<const unsigned short*>(p)));
  } else if constexpr (sizeof(S) == 4) {
    const unsigned bits = __ldcg(reinterpret_cast<const unsigned*>(p));
    S s;
    memcpy(&s, &bits, 4);
    return s;
  } else {
    static_assert(sizeof(S) == 8);
    const unsigned long long bits = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    S s;
    memcpy(&s, &bits, 8);
    return s;
  }
}

// A vector of elements: V is uint4 (16 bytes), uint2 (8) or unsigned (4), as wide as the
// pointers' alignment allows.
template <class Type, class V>
union Pack {
  static constexpr int kElements = static_cast<int>(sizeof(V) / sizeof(typename Type::Storage));
  V vector;
  typename Type::Storage elements[kElements];
};

// Two-wide half and bfloat16 arithmetic (sm_80+; host mode emulates the intrinsics lane by lane):
// one correctly rounded operation gives the same bits as the reference's "compute in float,
// round once" (float has more than 2p + 2 bits for both, so rounding twice is harmless); min and
// max keep NaN as the reference does.
template <class Op, class T2>
__device__ __forceinline__ T2 apply_pair(T2 a, T2 b) {
  if constexpr (std::is_same_v<Op, SumOp>) {
    return __hadd2(a, b);
  } else if constexpr (std::is_same_v<Op, ProdOp>) {
    return __hmul2(a, b);
  } else if constexpr (std::is_same_v<Op, MaxOp>) {
    return __hmax2_nan(a, b);
  } else {
    return __hmin2_nan(a, b);
  }
}

template <class Type>
struct PairOf {
  using Pair = void;
};
template <>
struct PairOf<HalfType> {
  using Pair = __half2;
};
template <>
struct PairOf<Bfloat16Type> {
  using Pair = __nv_bfloat162;
};

template <class Type, class Op, class V>
__device__ __forceinline__ V reduce_vector(V a, V b) {
  using Pair = typename PairOf<Type>::Pair;
  if constexpr (!std::is_void_v<Pair>) {
    static_assert(sizeof(V) % sizeof(Pair) == 0);
    constexpr int kPairs = static_cast<int>(sizeof(V) / sizeof(Pair));
    V result = a;
    WEFT_UNROLL
    for (int k = 0; k < kPairs; ++k) {
      Pair x, y;
      memcpy(&x, reinterpret_cast<const char*>(&a) + k * sizeof(Pair), sizeof(Pair));
      memcpy(&y, reinterpret_cast<const char*>(&b) + k * sizeof(Pair), sizeof(Pair));
      const Pair z = apply_pair<Op>(x, y);
      memcpy(reinterpret_cast<char*>(&result) + k * sizeof(Pair), &z, sizeof(Pair));
    }
    return result;
  } else {
    Pack<Type, V> x, y;
    x.vector = a;
    y.vector = b;
    WEFT_UNROLL
    for (int k = 0; k < Pack<Type, V>::kElements; ++k) {
      x.elements[k] = reduce<Type, Op>(x.elements[k], y.elements[k]);
    }
    return x.vector;
  }
}

// 8 bytes of elements (an LL line's payload, half an LL128 lane).
template <class Type, class Op>
__device__ __forceinline__ std::uint64_t reduce_word(std::uint64_t a, std::uint64_t b) {
  uint2 x, y;
  memcpy(&x, &a, 8);
  memcpy(&y, &b, 8);
  const uint2 r = reduce_vector<Type, Op>(x, y);
  std::uint64_t out;
  memcpy(&out, &r, 8);
  return out;
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
