// A library whose registration throws: a std::exception (WEFT_THROW_NON_STD undefined) or an int.
#include <stdexcept>

#include "weft/dsl/registry.h"

extern "C" void weft_register_algorithms(weft::dsl::Registry*) {
#ifdef WEFT_THROW_NON_STD
  throw 42;
#else
  throw std::runtime_error("the topology file this library reads is missing");
#endif
}
