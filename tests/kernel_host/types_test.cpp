// Every data type with every operator the runtime supports, in every protocol, in place and out
// of place, on a ring (rrs/rrcs/rcs chains) and on all-pairs (merged n-ary re, nops), against the
// CPU reference: integers exactly, half and bfloat16 through float with rounding after every
// operation as the reference does.
#include "kernel_host_support.h"

namespace weft::gpu::testing {
namespace {

constexpr DataType kAllTypes[] = {
    DataType::Int8,   DataType::Uint8, DataType::Int32, DataType::Uint32, DataType::Int64,
    DataType::Uint64, DataType::Half,  DataType::Float, DataType::Double, DataType::Bfloat16};

int every_type_and_operator(const ir::Algorithm& algo) {
  auto e = emulate_on_host(algo);
  int calls = 0;
  for (const auto& [dtype, op] : type_op_pairs(kAllTypes)) {
    for (const bool in_place : {false, true}) {
      CHECK(run_checked(*e, {kChunk, dtype, op, in_place}) == 0);
      ++calls;
    }
  }
  return calls;
}

TEST_CASE("types: every type and operator on a 4-rank ring", "[kernel-host][types]") {
  int calls = 0;
  for (const ir::Protocol proto : kProtocols) {
    calls += every_type_and_operator(perf::ring_allreduce(4, proto));
  }
  report_calls("ring, 10 types × 5 operators × 3 protocols × 2 modes", calls);
}

TEST_CASE("types: every type and operator on 3-rank all-pairs", "[kernel-host][types]") {
  int calls = 0;
  for (const ir::Protocol proto : kProtocols) {
    calls += every_type_and_operator(perf::allpairs_allreduce(3, proto));
  }
  report_calls("all-pairs, 10 types × 5 operators × 3 protocols × 2 modes", calls);
}

}  // namespace
}  // namespace weft::gpu::testing
