// NCCL's ring and tree written as Weft algorithms (weft/synthesis/nccl_algorithms.h). They follow
// how NCCL runs them closely enough that Weft's model of them can be set beside NCCL's own model
// of them (tests/synthesis/nccl_algorithms_test.cpp) and beside Weft's algorithms. What differs
// from NCCL is said where it is written.
#include "weft/synthesis/nccl_algorithms.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>

#include <fmt/format.h>

#include "weft/compiler/compiler.h"
#include "weft/compiler/verify.h"
#include "weft/predict/nccl_model.h"
#include "weft/predict/simulator.h"

namespace weft::synthesis {

namespace {

bool covered(ir::Collective collective) {
  return collective == ir::Collective::AllGather || collective == ir::Collective::ReduceScatter ||
         collective == ir::Collective::AllReduce;
}

dsl::Options options_for(const predict::Topology& topology, ir::Protocol protocol) {
  dsl::Options options;
  options.protocol = protocol;
  options.limits = "weft";
  options.nodes = topology.nodes() > 1 ? topology.nodes() : 0;
  return options;
}

// One threadblock per channel, sending to the ring's next rank and receiving from its previous
// one, as NCCL runs a ring channel in one block.
dsl::Hints on_ring(int channel) {
  return dsl::Hints{channel, channel, channel};
}

// Allgather: chunk j of every rank's block travels ring j from its origin.
dsl::Program ring_allgather(const std::vector<std::vector<int>>& rings, dsl::Options options,
                            bool in_place) {
  const int n = static_cast<int>(rings[0].size());
  const int c = static_cast<int>(rings.size());
  dsl::Program p("nccl_ring", dsl::Collective::allgather(n, c, in_place), options);
  if (!in_place) {
    // NCCL copies a rank's own block to its output in the same pass as its first send; Weft has
    // no step that does both, so the copy runs beside the ring on a threadblock of the channel's
    // own (on the ring's threadblock it would add a seventh of an 8-GPU ring's time).
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < c; ++j) {
        p.chunk(r, dsl::input, j).copy(r, dsl::output, r * c + j, dsl::Hints{j, c + j, c + j});
      }
    }
  }
  for (int step = 0; step < n - 1; ++step) {
    for (int j = 0; j < c; ++j) {
      const std::vector<int>& ring = rings[static_cast<std::size_t>(j)];
      for (int start = 0; start < n; ++start) {
        const int origin = ring[static_cast<std::size_t>(start)];
        const int from = ring[static_cast<std::size_t>((start + step) % n)];
        const int to = ring[static_cast<std::size_t>((start + step + 1) % n)];
        const int k = origin * c + j;
        // The first hop reads the origin's input, as NCCL's does.
        const dsl::ChunkRef held =
            step == 0 && !in_place ? p.chunk(from, dsl::input, j) : p.chunk(from, dsl::output, k);
        held.copy(to, dsl::output, k, on_ring(j));
      }
    }
  }
  return p;
}

// Reduce-scatter: chunk j of rank q's block of the result is reduced around ring j, ending on q.
// Partial sums travel through the inputs (as the library's reducescatter_ring).
dsl::Program ring_reducescatter(const std::vector<std::vector<int>>& rings, dsl::Options options,
                                bool in_place) {
  const int n = static_cast<int>(rings[0].size());
  const int c = static_cast<int>(rings.size());
  dsl::Program p("nccl_ring", dsl::Collective::reducescatter(n, c, in_place), options);
  for (int step = 0; step < n - 1; ++step) {
    for (int j = 0; j < c; ++j) {
      const std::vector<int>& ring = rings[static_cast<std::size_t>(j)];
      for (int end = 0; end < n; ++end) {
        const int q = ring[static_cast<std::size_t>(end)];
        const int from = ring[static_cast<std::size_t>((end + 1 + step) % n)];
        const int to = ring[static_cast<std::size_t>((end + 2 + step) % n)];
        const int k = q * c + j;
        if (to == q && !in_place) {
          const dsl::ChunkRef result = p.chunk(q, dsl::output, j);
          p.chunk(q, dsl::input, k).copy(result, on_ring(j));
          result.reduce(p.chunk(from, dsl::input, k), on_ring(j));
        } else {
          p.chunk(to, dsl::input, k).reduce(p.chunk(from, dsl::input, k), on_ring(j));
        }
      }
    }
  }
  return p;
}

// Allreduce: ring j carries n chunks (j·n + s, starting at the ring's s-th rank), each reduced
// around the ring and then copied around it again, as NCCL's ring allreduce.
dsl::Program ring_allreduce(const std::vector<std::vector<int>>& rings, dsl::Options options,
                            bool in_place) {
  const int n = static_cast<int>(rings[0].size());
  const int c = static_cast<int>(rings.size());
  dsl::Program p("nccl_ring", dsl::Collective::allreduce(n, n * c, in_place), options);
  const auto at = [&](int j, int position) {
    return rings[static_cast<std::size_t>(j)][static_cast<std::size_t>(position % n)];
  };
  // Out of place the partial sums travel through the inputs, as NCCL's, which fusion keeps in
  // flight (receive, reduce, send), and the last rank of each chunk's chain writes the sum to
  // its output.
  const dsl::Buffer partials = in_place ? dsl::output : dsl::input;
  for (int step = 0; step < n - 1; ++step) {
    for (int j = 0; j < c; ++j) {
      for (int s = 0; s < n; ++s) {
        const int k = j * n + s;
        const int to = at(j, s + step + 1);
        const dsl::ChunkRef from = p.chunk(at(j, s + step), partials, k);
        if (step == n - 2 && !in_place) {
          const dsl::ChunkRef result = p.chunk(to, dsl::output, k);
          p.chunk(to, dsl::input, k).copy(result, on_ring(j));
          result.reduce(from, on_ring(j));
        } else {
          p.chunk(to, partials, k).reduce(from, on_ring(j));
        }
      }
    }
  }
  for (int step = 0; step < n - 1; ++step) {
    for (int j = 0; j < c; ++j) {
      for (int s = 0; s < n; ++s) {
        const int from = at(j, s + n - 1 + step);
        p.chunk(from, dsl::output, j * n + s)
            .copy(at(j, s + n + step), dsl::output, j * n + s, on_ring(j));
      }
    }
  }
  return p;
}

// NCCL's binary tree over `nodes` (trees.cc, ncclGetBtree): the parent of every node, -1 for the
// root (node 0).
std::vector<int> btree_parents(int nodes) {
  std::vector<int> parent(static_cast<std::size_t>(nodes), -1);
  for (int rank = 1; rank < nodes; ++rank) {
    int bit = 1;
    while (!(bit & rank)) bit <<= 1;
    int up = (rank ^ bit) | (bit << 1);
    if (up >= nodes) up = rank ^ bit;
    parent[static_cast<std::size_t>(rank)] = up;
  }
  return parent;
}

// NCCL's double binary tree (ncclGetDtree): the first tree, and the second one mirrored (an even
// count of nodes) or shifted by one (odd), so that a node inner in one is mostly a leaf in the
// other. On two nodes each is the other's root.
std::vector<int> second_tree_parents(int nodes) {
  const std::vector<int> first = btree_parents(nodes);
  std::vector<int> parent(static_cast<std::size_t>(nodes), -1);
  for (int node = 0; node < nodes; ++node) {
    const bool mirror = nodes % 2 == 0;
    const int image = mirror ? nodes - 1 - node : (node - 1 + nodes) % nodes;
    const int up = first[static_cast<std::size_t>(image)];
    if (up >= 0)
      parent[static_cast<std::size_t>(node)] = mirror ? nodes - 1 - up : (up + 1) % nodes;
  }
  return parent;
}

std::vector<int> depths(const std::vector<int>& parent) {
  std::vector<int> depth(parent.size(), 0);
  for (std::size_t node = 0; node < parent.size(); ++node) {
    for (int up = parent[node]; up >= 0; up = parent[static_cast<std::size_t>(up)]) ++depth[node];
  }
  return depth;
}

// The tree: chain k (of NCCL's channels / 2) carries chunk k. Within a node it runs through the
// local GPUs in order from its first (the chains' firsts spread evenly over the node) to the one
// before it (its last); across nodes chains alternate between the double binary tree's two trees,
// each chunk up the tree reduced and then down it copied, streamed tile by tile. As NCCL's balanced
// tree pattern (NCCL_TOPO_PATTERN_BALANCED_TREE), a node's first GPU talks to its parent node and
// its last GPU to its children, so that a node's network traffic leaves through two NICs. What
// differs from NCCL: a threadblock per direction (up k, down chains + k) where NCCL splits one
// block's threads between the directions at twice the channels (the same block budget); the
// chains share one order per channel with no tree graph search of their own; a node's last GPU
// takes a second child's partial sums on a threadblock the compiler adds.
dsl::Program tree_allreduce(const predict::Topology& topology, int chains, dsl::Options options,
                            bool in_place) {
  const int n = topology.ranks();
  const int g = topology.gpus_per_node();
  const int nodes = topology.nodes();
  dsl::Program p("nccl_tree", dsl::Collective::allreduce(n, chains, in_place), options);
  const std::vector<std::vector<int>> parents = {btree_parents(nodes), second_tree_parents(nodes)};
  // The rank at position i of chain k in `node`. The chains start spread evenly over the node's
  // GPUs, so that across nodes each chain's first and last GPU, hence its NICs, are its own: on
  // two nodes of 8 GPUs and 4 chains no NIC sends for two (with consecutive starts, a node's
  // GPU 0 sent one tree's partial sums up and the other's totals down, at half the speed).
  const auto at = [&](int node, int k, int i) {
    const int first = chains <= g ? k * g / chains : k;
    return node * g + (first + i) % g;
  };
  for (int k = 0; k < chains; ++k) {
    const std::vector<int>& parent = parents[static_cast<std::size_t>(k % 2)];
    const std::vector<int> depth = depths(parent);
    std::vector<int> order(static_cast<std::size_t>(nodes));
    for (int node = 0; node < nodes; ++node) order[static_cast<std::size_t>(node)] = node;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return depth[static_cast<std::size_t>(a)] > depth[static_cast<std::size_t>(b)];
    });
    const dsl::Hints up{k, k, k};
    const dsl::Hints down{k, chains + k, chains + k};
    if (!in_place) {
      for (int r = 0; r < n; ++r) p.chunk(r, dsl::input, k).copy(r, dsl::output, k, up);
    }
    // Up, the deepest nodes first: a node's last GPU adds its children's sums, then the chain
    // carries the node's sum to its first GPU.
    for (const int node : order) {
      int children = 0;
      for (int child = 0; child < nodes; ++child) {
        if (parent[static_cast<std::size_t>(child)] != node) continue;
        const dsl::Hints hints{k, k, children++ == 0 ? k : -1};
        p.chunk(at(node, k, g - 1), dsl::output, k)
            .reduce(p.chunk(at(child, k, 0), dsl::output, k), hints);
      }
      for (int i = g - 1; i >= 1; --i) {
        p.chunk(at(node, k, i - 1), dsl::output, k)
            .reduce(p.chunk(at(node, k, i), dsl::output, k), up);
      }
    }
    // Down, the root first: a node's first GPU takes the total from its parent's last GPU, and
    // the chain carries it on.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int node = *it;
      const int up_node = parent[static_cast<std::size_t>(node)];
      if (up_node >= 0) {
        int sibling = 0;  // the second child of a node is sent to on a threadblock of its own
        for (int child = 0; child < node; ++child) {
          if (parent[static_cast<std::size_t>(child)] == up_node) ++sibling;
        }
        const dsl::Hints hints{k, sibling == 0 ? chains + k : -1, chains + k};
        p.chunk(at(up_node, k, g - 1), dsl::output, k).copy(at(node, k, 0), dsl::output, k, hints);
      }
      for (int i = 0; i + 1 < g; ++i) {
        p.chunk(at(node, k, i), dsl::output, k).copy(at(node, k, i + 1), dsl::output, k, down);
      }
    }
  }
  return p;
}

// Compiled with the verify pass (one seed per case, as tune's proofs): the candidate, or why not.
std::optional<tuning::Candidate> compiled(const std::string& name, const dsl::Program& program,
                                          std::vector<std::string>& rejected) {
  compiler::CompileOptions options;
  options.verify = compiler::compile_proof(1);
  // The threadblocks are NCCL's, written out: nothing for time to judge.
  options.judge.enabled = false;
  compiler::CompileResult result = compiler::compile(program, options);
  if (!result.ok()) {
    std::string why = result.error_text();
    if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
    rejected.push_back(fmt::format("{}: {}", name, why));
    return std::nullopt;
  }
  return tuning::Candidate{name, std::move(*result.algorithm)};
}

// The largest size at most `bytes` that the algorithm's chunks divide into whole floats, or the
// smallest they divide where `bytes` is below it.
std::uint64_t divisible_size(const ir::Algorithm& algorithm, std::uint64_t bytes) {
  // The call's elements (count × the collective's multiplier) split into nchunksperloop chunks.
  const std::uint64_t whole = static_cast<std::uint64_t>(std::max(1, algorithm.nchunksperloop)) * 4;
  return std::max(whole, bytes / whole * whole);
}

}  // namespace

std::vector<std::vector<int>> nccl_rings(const predict::Topology& topology, int channels) {
  const int g = topology.gpus_per_node();
  std::vector<std::vector<int>> rings;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> ring;
    for (int node = 0; node < topology.nodes(); ++node) {
      for (int i = 0; i < g; ++i) ring.push_back(node * g + (c + i) % g);
    }
    rings.push_back(std::move(ring));
  }
  return rings;
}

std::optional<dsl::Program> nccl_ring_program(const predict::Topology& topology,
                                              ir::Collective collective, ir::Protocol protocol,
                                              bool in_place) {
  if (!covered(collective) || topology.ranks() < 2) return std::nullopt;
  const int channels = std::max(1, predict::nccl_ring_graph(topology).channels);
  const std::vector<std::vector<int>> rings = nccl_rings(topology, channels);
  const dsl::Options options = options_for(topology, protocol);
  switch (collective) {
    case ir::Collective::AllGather:
      return ring_allgather(rings, options, in_place);
    case ir::Collective::ReduceScatter:
      return ring_reducescatter(rings, options, in_place);
    default:
      return ring_allreduce(rings, options, in_place);
  }
}

std::optional<dsl::Program> nccl_tree_program(const predict::Topology& topology,
                                              ir::Collective collective, ir::Protocol protocol,
                                              bool in_place) {
  if (collective != ir::Collective::AllReduce || topology.ranks() < 2) return std::nullopt;
  // NCCL gives the tree the ring's channels, each block's threads split between up and down: a
  // threadblock per direction at half the channels is the same budget (at least one chain, and
  // one per tree across nodes).
  const int channels = predict::nccl_ring_graph(topology).channels;
  const int chains = std::max(topology.nodes() > 1 ? 2 : 1, channels / 2);
  return tree_allreduce(topology, chains, options_for(topology, protocol), in_place);
}

NcclAlgorithms nccl_algorithms(const predict::Topology& topology, ir::Collective collective,
                               bool in_place) {
  NcclAlgorithms out;
  for (const ir::Protocol protocol :
       {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
    const std::string suffix(ir::to_string(protocol));
    try {
      if (auto ring = nccl_ring_program(topology, collective, protocol, in_place)) {
        if (auto c = compiled("NCCL ring as Weft " + suffix, *ring, out.rejected)) {
          out.candidates.push_back(std::move(*c));
        }
      }
      if (auto tree = nccl_tree_program(topology, collective, protocol, in_place)) {
        if (auto c = compiled("NCCL tree as Weft " + suffix, *tree, out.rejected)) {
          out.candidates.push_back(std::move(*c));
        }
      }
    } catch (const std::exception& e) {
      out.rejected.push_back(fmt::format("NCCL's algorithms as Weft {}: {}", suffix, e.what()));
    }
  }
  return out;
}

std::vector<double> nccl_as_weft_times(std::span<const tuning::Candidate> algorithms,
                                       const predict::Topology& topology,
                                       const std::vector<std::uint64_t>& sizes, bool in_place) {
  std::vector<double> best(sizes.size(), tuning::kNotApplicable);
  for (const tuning::Candidate& candidate : algorithms) {
    const predict::Simulator simulator(candidate.algorithm, topology);
    if (!simulator.error().empty()) continue;
    predict::SimulationOptions options;
    options.in_place = in_place;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      options.bytes = divisible_size(candidate.algorithm, sizes[i]);
      const predict::SimulationResult r = simulator.run(options);
      if (r.ok()) best[i] = std::min(best[i], r.time_us);
    }
  }
  return best;
}

NcclAsWeft nccl_as_weft_compiled(const predict::Topology& topology, ir::Collective collective,
                                 bool in_place) {
  const auto started = std::chrono::steady_clock::now();
  NcclAsWeft out;
  if (!covered(collective) || topology.ranks() < 2) return out;
  if (topology.ranks() > kNcclAsWeftMaxRanks) {
    out.notes.push_back(fmt::format(
        "NCCL's algorithms on Weft's model: not predicted above {} ranks (the comparison with "
        "NCCL's model stands)",
        kNcclAsWeftMaxRanks));
    return out;
  }
  NcclAlgorithms algorithms = nccl_algorithms(topology, collective, in_place);
  for (const std::string& why : algorithms.rejected) {
    out.notes.push_back("NCCL's algorithm on Weft's model left out: " + why);
  }
  out.candidates = std::move(algorithms.candidates);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

NcclAsWeft nccl_as_weft(const predict::Topology& topology, ir::Collective collective,
                        const std::vector<std::uint64_t>& sizes, bool in_place) {
  const auto started = std::chrono::steady_clock::now();
  NcclAsWeft out = nccl_as_weft_compiled(topology, collective, in_place);
  if (!covered(collective) || topology.ranks() < 2 || topology.ranks() > kNcclAsWeftMaxRanks) {
    return out;  // not predicted (the note says why above 64 ranks)
  }
  out.times_us = nccl_as_weft_times(out.candidates, topology, sizes, in_place);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace weft::synthesis
