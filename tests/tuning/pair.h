// What the tuning tests share: the two-rank allreduce of tests/data/xml and two H100s to run it.
#pragma once

#include <utility>

#include <catch2/catch.hpp>

#include "weft/ir/ir.h"
#include "weft/ir/validate.h"
#include "weft/predict/topology.h"

namespace weft::tuning::test {

inline ir::Algorithm pair_allreduce() {
  ir::LoadResult loaded =
      ir::load_xml_file(WEFT_TEST_DATA_DIR "/xml/pair_allreduce.xml", ir::weft_limits());
  REQUIRE(loaded.algorithm);
  return *loaded.algorithm;
}

inline predict::Topology two_gpus() {
  predict::TopologyRequest request;
  request.source = "h100-nvswitch";
  request.gpus_per_node = 2;
  predict::TopologyResult loaded = predict::load_topology(request);
  REQUIRE(loaded.topology);
  return std::move(*loaded.topology);
}

}  // namespace weft::tuning::test
