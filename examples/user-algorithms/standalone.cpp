// Your algorithms, way 2: a program that links Weft::compiler (which brings Weft::dsl), writes
// an algorithm and compiles it. The compiler verifies it with the CPU reference executor before
// anything is written.
//
//   my_standalone out.xml [ranks]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "weft/compiler/compiler.h"
#include "weft/dsl/dsl.h"

int main(int argc, char** argv) {
  namespace dsl = weft::dsl;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.xml [ranks]\n", argv[0]);
    return 2;
  }
  const int ranks = argc > 2 ? std::atoi(argv[2]) : 4;
  try {
    // A two-phase allreduce on a star: everyone's chunk is reduced on rank 0, which sends the
    // result back.
    dsl::Options options;
    options.protocol = weft::ir::Protocol::LL;
    dsl::Program p("star_allreduce", dsl::Collective::allreduce(ranks, 1), options);
    for (int r = 1; r < ranks; ++r) p.chunk(0, dsl::input, 0).reduce(p.chunk(r, dsl::input, 0));
    for (int r = 1; r < ranks; ++r) p.chunk(0, dsl::input, 0).copy(r, dsl::input, 0);

    const weft::compiler::CompileOptions compile_options;
    const weft::compiler::CompileResult result = weft::compiler::compile(p, compile_options);
    if (!result.ok()) {
      std::fprintf(stderr, "%s", result.error_text().c_str());
      return 1;
    }
    std::string error;
    if (!weft::compiler::write_xml_file(result, argv[1], &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    std::printf("%s: %s\n", argv[1], result.summary().c_str());
  } catch (const dsl::DslError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
