// Which algorithms a communicator gets by where its ranks run (weft/plugin/host_layout.h).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "weft/plugin/host_layout.h"

namespace weft::plugin {
namespace {

ir::Algorithm algorithm(int ngpus, int nnodes) {
  ir::Algorithm a;
  a.ngpus = ngpus;
  a.nnodes = nnodes;
  return a;
}

TEST_CASE("Host layouts: consecutive equal blocks in host order, or not", "[plugin]") {
  const std::vector<std::string> two_by_two{"a", "a", "b", "b"};
  const HostLayout blocks = host_layout(two_by_two);
  CHECK(blocks.count() == 2);
  CHECK(blocks.blocks);
  CHECK(blocks.per_host == 2);
  CHECK(blocks.describe() == "2 hosts, 2 ranks each");
  const std::vector<std::string> interleaved{"a", "b", "a", "b"};
  CHECK_FALSE(host_layout(interleaved).blocks);
  const std::vector<std::string> uneven{"a", "a", "a", "b"};
  CHECK_FALSE(host_layout(uneven).blocks);
  const std::vector<std::string> one{"a", "a", "a"};
  CHECK(host_layout(one).count() == 1);
  CHECK(host_layout(one).describe() == "one host");
}

TEST_CASE("An algorithm runs only where its ranks lie on hosts as it was written for",
          "[plugin]") {
  const HostLayout one = host_layout(std::vector<std::string>{"a", "a", "a", "a"});
  const HostLayout two = host_layout(std::vector<std::string>{"a", "a", "b", "b"});
  const HostLayout twisted = host_layout(std::vector<std::string>{"a", "b", "a", "b"});
  // A file that states no nodes is one node's.
  CHECK_FALSE(placement_mismatch(algorithm(4, 0), one));
  CHECK_FALSE(placement_mismatch(algorithm(4, 1), one));
  CHECK_THAT(*placement_mismatch(algorithm(4, 0), two),
             Catch::Contains("written for one node") && Catch::Contains("2 hosts, 2 ranks each"));
  CHECK_FALSE(placement_mismatch(algorithm(4, 2), two));
  CHECK_THAT(*placement_mismatch(algorithm(4, 2), one), Catch::Contains("is on one host"));
  CHECK_THAT(*placement_mismatch(algorithm(4, 2), twisted),
             Catch::Contains("not in equal consecutive blocks"));
  CHECK_THAT(*placement_mismatch(algorithm(4, 4), two), Catch::Contains("written for 4 nodes"));
}

}  // namespace
}  // namespace weft::plugin
