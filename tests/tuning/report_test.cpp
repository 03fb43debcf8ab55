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

TEST_CASE("a contender's family is its algorithm, without variant parameters", "[tuning]") {
  const auto family_of = [](std::string name, bool nccl = false) {
    Contender c;
    c.name = std::move(name);
    c.nccl = nccl;
    return family(c);
  };
  CHECK(family_of("allreduce_ring LL i1 c4") == "allreduce_ring");
  CHECK(family_of("synth_rings_l8_p8 Simple") == "synth_rings");
  CHECK(family_of("synth_rails_direct_split_p2 Simple") == "synth_rails_direct_split");
  CHECK(family_of("NCCL ring LL", true) == "NCCL ring");
  CHECK(family_of("mine.xml") == "mine.xml");
}

TEST_CASE("a band's margin is over the best other algorithm, not the winner's variant",
          "[tuning]") {
  const std::vector<std::uint64_t> sizes{1024, 4096};
  std::vector<Contender> contenders(3);
  contenders[0].name = "allreduce_ring LL i1 c1";
  contenders[0].time_us = {10, 20};
  contenders[1].name = "allreduce_ring LL i1 c4";  // the same ring on more channels
  contenders[1].time_us = {10.1, 20.2};
  contenders[2].name = "allreduce_allpairs LL i1 c1";
  contenders[2].time_us = {15, 40};
  const std::vector<Band> bands = choose_bands(sizes, contenders);
  REQUIRE(bands.size() == 1);
  CHECK(bands[0].contender == 0);
  CHECK(bands[0].runner_up == 2);
  CHECK(bands[0].margin == Approx(1.5));
}

TEST_CASE("report.svg draws the winners and each family's best, on log axes that can be read",
          "[tuning]") {
  // 21 sizes from 1 KB to 1 GB and 69 contenders: 23 families of three variants each, of which
  // four take turns at being fastest (as a real tuning's few bands).
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = 1024; s <= (std::uint64_t{1} << 30); s *= 2) sizes.push_back(s);
  std::vector<Contender> contenders;
  for (int f = 0; f < 23; ++f) {
    for (int v = 0; v < 3; ++v) {
      Contender c;
      c.name = "family" + std::string(1, static_cast<char>('a' + f)) + " Simple i1 c" +
               std::to_string(v + 1);
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        // Families 0 to 3 are each fastest on a quarter of the sizes; the others trail.
        const bool turn = f < 4 && static_cast<int>(i * 4 / sizes.size()) == f;
        const double latency = turn ? 5.0 : 6.0 + f;
        c.time_us.push_back(latency + static_cast<double>(sizes[i]) / 2e5 + v);
      }
      contenders.push_back(std::move(c));
    }
  }
  const std::vector<Band> bands = choose_bands(sizes, contenders);
  ReportInfo info;
  info.title = "allreduce on 8 ranks";
  info.ranks = 8;
  info.collective = ir::Collective::AllReduce;
  const std::string svg = report_svg(sizes, contenders, bands, info);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));

  // At most twelve lines, every one in a colour of its own, every winner among them.
  std::vector<std::string> colours, titles;
  for (const pugi::xml_node line : doc.child("svg").children("polyline")) {
    colours.push_back(line.attribute("stroke").value());
    titles.push_back(line.child_value("title"));
  }
  CHECK(colours.size() <= 12);
  CHECK(colours.size() >= 2);
  std::vector<std::string> unique = colours;
  std::sort(unique.begin(), unique.end());
  CHECK(std::unique(unique.begin(), unique.end()) == unique.end());
  for (const Band& band : bands) {
    const std::string& winner = contenders[static_cast<std::size_t>(band.contender)].name;
    CHECK(std::find(titles.begin(), titles.end(), winner) != titles.end());
  }
  CHECK(svg.find("more candidates in report.md") != std::string::npos);

  // The size labels under the axis stand apart: at 12 px, about 7 px a character.
  std::vector<std::pair<double, double>> spans;
  for (const pugi::xml_node text : doc.child("svg").children("text")) {
    const std::string label = text.child_value();
    if (label.find("KB") == std::string::npos && label.find("MB") == std::string::npos &&
        label.find("GB") == std::string::npos) {
      continue;
    }
    if (std::string(text.attribute("text-anchor").value()) != "middle") continue;
    if (text.attribute("transform")) continue;  // the axis title, standing on its side
    const double x = text.attribute("x").as_double();
    const double half = 3.5 * static_cast<double>(label.size());
    spans.emplace_back(x - half, x + half);
  }
  REQUIRE(spans.size() >= 5);
  std::sort(spans.begin(), spans.end());
  for (std::size_t k = 1; k < spans.size(); ++k) {
    INFO("labels at " << spans[k - 1].first << ".." << spans[k - 1].second << " and "
                      << spans[k].first << ".." << spans[k].second);
    CHECK(spans[k].first > spans[k - 1].second);
  }

  // The busbw axis is logarithmic: its gridlines are decades, and 1 KB's bandwidth is not on
  // the floor (a linear axis put every size below a few hundred KB there).
  CHECK(svg.find("log scale") != std::string::npos);
  CHECK(svg.find(">0.1<") != std::string::npos);
  CHECK(svg.find(">1<") != std::string::npos);
  CHECK(svg.find(">100<") != std::string::npos);
}
