// The tuning report's picture (report.svg) stays well-formed XML whatever the contenders are
// called: a name read from a user's XML may hold markup or, through a character reference,
// control characters, which XML 1.0 cannot carry even as references.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <pugixml.hpp>

#include "weft/tuning/bands.h"

using namespace weft;
using namespace weft::tuning;

TEST_CASE("report.svg escapes markup and replaces control characters in names", "[tuning]") {
  const std::vector<std::uint64_t> sizes{1024, 1 << 20};
  std::vector<Contender> contenders(2);
  contenders[0].name = "ring <&> \"a\"\x01";
  contenders[0].time_us = {5, 50};
  contenders[1].name = "NCCL ring LL";
  contenders[1].nccl = true;
  contenders[1].nccl_algorithm = "ring";
  contenders[1].time_us = {4, 80};
  const std::vector<Band> bands = choose_bands(sizes, contenders);
  ReportInfo info;
  info.title = "allreduce\x02 on 8 ranks";
  info.ranks = 8;
  info.files = {"a.xml", ""};
  const std::string svg = report_svg(sizes, contenders, bands, info);

  const auto control = std::find_if(svg.begin(), svg.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r';
  });
  INFO("control character at offset " << (control - svg.begin()));
  CHECK(control == svg.end());
  CHECK(svg.find("&#") == std::string::npos);  // no character references a browser refuses
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_string(svg.c_str());
  INFO(parsed.description() << " at offset " << parsed.offset);
  REQUIRE(parsed);
  CHECK(svg.find("ring &lt;&amp;&gt; &quot;a&quot;?") != std::string::npos);
  CHECK(svg.find("allreduce? on 8 ranks") != std::string::npos);
}
