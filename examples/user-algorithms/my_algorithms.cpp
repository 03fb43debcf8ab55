// Your algorithms, as a shared library that weftc loads:
//
//   weftc compile --load build/libmy_algorithms.so my_allgather_reverse_ring --ranks 8
//         -o reverse_ring.xml
//
// The library exports one C function that adds algorithms to the Registry weftc passes in. It
// needs only Weft::dsl (CMakeLists.txt beside this file). Including weft/dsl/registry.h also
// stamps it with the Weft version it is built against; weftc refuses a library of another.
#include "weft/dsl/dsl.h"

namespace {

using weft::dsl::AlgorithmParams;
using weft::dsl::Program;

// Allgather around a ring in the direction opposite to the library's: rank r's block goes to
// r-1, r-2, ...
Program reverse_ring_allgather(const AlgorithmParams& params) {
  namespace dsl = weft::dsl;
  const int n = params.ranks;
  const bool in_place = params.in_place.value_or(true);
  Program p("my_allgather_reverse_ring", dsl::Collective::allgather(n, 1, in_place),
            params.options());
  if (!in_place) {
    for (int r = 0; r < n; ++r) p.chunk(r, dsl::input, 0).copy(r, dsl::output, r);
  }
  for (int step = 0; step < n - 1; ++step) {
    for (int origin = 0; origin < n; ++origin) {
      const int from = (origin - step + n) % n;
      const int to = (from - 1 + n) % n;
      p.chunk(from, dsl::output, origin).copy(to, dsl::output, origin);
    }
  }
  return p;
}

}  // namespace

extern "C" void weft_register_algorithms(weft::dsl::Registry* registry) {
  registry->add(
      weft::dsl::AlgorithmInfo{"my_allgather_reverse_ring", "allgather",
                               "example user algorithm: allgather around a ring, backwards",
                               weft::dsl::Shape::AnyRanks, 2, reverse_ring_allgather});
}
