// Checks a traced program against its collective's postcondition, on the symbolic contents: for
// every rank and output chunk, the input chunks reduced into it must be exactly the expected
// ones (each once).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "weft/dsl/contents.h"
#include "weft/dsl/program.h"

namespace weft::dsl {

struct PostconditionFailure {
  int rank = 0;
  int index = 0;  // output chunk
  std::vector<ChunkId> expected;
  std::vector<Contribution> found;
  // The last operation that wrote the chunk ("reduce at ring.cpp:50"), empty when none did: where
  // to start looking.
  std::string last_written_by;
  // "rank 2 output[1]: expected {r0c1, r1c1, r2c1}, found {r0c1, r2c1}: missing r1c1 (last
  // written by reduce at ring.cpp:50)"
  std::string str() const;
};

struct PostconditionReport {
  std::vector<PostconditionFailure> failures;  // the first few
  std::size_t failure_count = 0;
  bool ok() const { return failure_count == 0; }
  std::string str() const;  // one line per reported failure, and how many more
};

PostconditionReport check_postcondition(const Program& program, std::size_t max_reported = 8);

}  // namespace weft::dsl
