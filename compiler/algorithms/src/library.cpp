#include "weft/algorithms/library.h"

namespace weft::algorithms {

void register_library(dsl::Registry& registry) {
  using dsl::Shape;
  auto add = [&](std::string name, std::string collective, std::string summary, Shape shape,
                 Program (*build)(const AlgorithmParams&)) {
    registry.add(dsl::AlgorithmInfo{std::move(name), std::move(collective), std::move(summary),
                                    shape, 2, build});
  };
  add("allreduce_ring", "allreduce",
      "reduce around a ring, then copy around it; --channels rings share the links",
      Shape::AnyRanks, allreduce_ring);
  add("allreduce_allpairs", "allreduce",
      "one-shot reduce-scatter through scratch, then one-shot allgather", Shape::AnyRanks,
      allreduce_allpairs);
  add("allreduce_recursive_halving_doubling", "allreduce",
      "recursive halving reduce-scatter, recursive doubling allgather", Shape::PowerOfTwoRanks,
      allreduce_recursive_halving_doubling);
  add("allreduce_double_binary_tree", "allreduce",
      "reduce up and broadcast down two complementary binary trees, pipelined", Shape::AnyRanks,
      allreduce_double_binary_tree);
  add("allreduce_hierarchical", "allreduce",
      "BlueConnect: intra-node reduce-scatter, inter-node reduce-scatter + allgather, "
      "intra-node allgather",
      Shape::NodesTimesGpus, allreduce_hierarchical);
  add("allgather_ring", "allgather", "each rank's block travels around a ring", Shape::AnyRanks,
      allgather_ring);
  add("allgather_direct", "allgather", "each rank sends its block to every other rank",
      Shape::AnyRanks, allgather_direct);
  add("allgather_recursive_doubling", "allgather",
      "log2 N rounds exchanging everything held with rank ^ d", Shape::PowerOfTwoRanks,
      allgather_recursive_doubling);
  add("reducescatter_ring", "reducescatter", "each block is reduced around a ring to its owner",
      Shape::AnyRanks, reducescatter_ring);
  add("reducescatter_allpairs", "reducescatter",
      "every rank sends block q to rank q, which reduces what it received", Shape::AnyRanks,
      reducescatter_allpairs);
  add("alltoall_direct", "alltoall", "every rank sends block q straight to rank q", Shape::AnyRanks,
      alltoall_direct);
  add("alltoall_two_step", "alltoall",
      "gather per destination node over the fast links, one transfer per peer over the slow one",
      Shape::NodesTimesGpus, alltoall_two_step);
  add("broadcast_chain", "broadcast", "pipelined chain from the root", Shape::AnyRanks,
      broadcast_chain);
  add("broadcast_binomial_tree", "broadcast", "binomial tree from the root, pipelined",
      Shape::AnyRanks, broadcast_binomial_tree);
  add("reduce_chain", "reduce", "pipelined chain toward the root", Shape::AnyRanks, reduce_chain);
  add("reduce_binomial_tree", "reduce", "binomial tree toward the root, pipelined", Shape::AnyRanks,
      reduce_binomial_tree);
  add("all_to_next", "custom", "custom collective: rank i's input to rank i+1's output",
      Shape::AnyRanks, all_to_next);
}

}  // namespace weft::algorithms
