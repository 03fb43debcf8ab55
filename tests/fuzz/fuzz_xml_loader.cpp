// libFuzzer target for everything that loads an algorithm file: the XML reader and validation
// under both limits profiles, then, for an accepted input, the analysis and the writer. Any input
// must give diagnostics, never a crash, a hang or undefined behaviour; an accepted input must be
// written as XML that is accepted again and written identically.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "weft/ir/analysis.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

namespace {

[[noreturn]] void fail(const char* what, const weft::Diagnostics& diagnostics,
                       const std::string& written) {
  std::fprintf(stderr, "fuzz_xml_loader: %s\n%s\n--- written XML ---\n%s\n", what,
               diagnostics.str().c_str(), written.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const weft::ir::LimitsProfile& limits :
       {weft::ir::msccl_limits(), weft::ir::weft_limits()}) {
    const weft::ir::LoadResult loaded = weft::ir::load_xml_string(text, limits, "fuzz.xml");
    for (const weft::Diagnostic& d : loaded.diagnostics.items) (void)d.str();
    if (!loaded.ok()) continue;
    (void)weft::ir::summarize(*loaded.algorithm);
    const std::string written = weft::ir::write_xml(*loaded.algorithm);
    const weft::ir::LoadResult again = weft::ir::load_xml_string(written, limits, "written.xml");
    if (!again.ok()) {
      fail("an accepted algorithm, once written, is refused", again.diagnostics, written);
    }
    if (weft::ir::write_xml(*again.algorithm) != written) {
      fail("writing the re-read algorithm gives different XML", again.diagnostics, written);
    }
  }
  return 0;
}
