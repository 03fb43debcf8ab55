// Private to weft_ir: the algorithm's steps as one graph, shared by validation (dependency
// cycles) and analysis (critical path). Steps are numbered densely, rank by rank and threadblock
// by threadblock; each step has at most three predecessors, so the graph is stored as fixed
// predecessor slots and every algorithm over it is iterative and linear.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "weft/ir/ir.h"

namespace weft::ir::detail {

class StepNumbering {
 public:
  explicit StepNumbering(const Algorithm& algo);

  std::size_t size() const { return first_step_.back(); }
  std::size_t node(int rank, int tb, int step) const {
    return first_step_[first_tb_[static_cast<std::size_t>(rank)] + static_cast<std::size_t>(tb)] +
           static_cast<std::size_t>(step);
  }
  struct Location {
    int rank;
    int tb;
    int step;
  };
  Location locate(std::size_t node) const;

 private:
  std::vector<std::size_t> first_tb_;    // per rank, then the total
  std::vector<std::size_t> first_step_;  // per flat threadblock, then the total
};

// Whether `depid`/`deps` of a step of `tb` on `gpu` name another threadblock's existing step.
bool dependency_in_range(const Gpu& gpu, int tb, const Step& step);

// A peer a threadblock may name: another rank that exists.
inline bool peer_in_range(const Algorithm& algo, int rank, int peer) {
  return peer >= 0 && peer != rank && peer < algo.ngpus &&
         static_cast<std::size_t>(peer) < algo.gpus.size();
}

class StepGraph {
 public:
  static constexpr std::size_t kNone = SIZE_MAX;

  explicit StepGraph(std::size_t nodes) : predecessors_(nodes, {kNone, kNone, kNone}) {}

  std::size_t size() const { return predecessors_.size(); }
  void add_edge(std::size_t from, std::size_t to);
  const std::array<std::size_t, 3>& predecessors(std::size_t node) const {
    return predecessors_[node];
  }
  // Kahn's algorithm: every node that is not on a cycle nor after one, in an order where each
  // node comes after its predecessors.
  std::vector<std::size_t> topological_order() const;

 private:
  std::vector<std::array<std::size_t, 3>> predecessors_;
};

// Program order and in-range dependencies of every rank.
StepGraph local_step_graph(const Algorithm& algo, const StepNumbering& numbering);

// The two ends of a connection (channel, sender, receiver): the sending threadblock on the
// sender's rank and the receiving one on the receiver's rank, -1 when absent.
struct ConnectionEnds {
  int sender_tb = -1;
  int receiver_tb = -1;
};
using ConnectionMap = std::map<Connection, ConnectionEnds>;

// Indexes every threadblock with an in-range peer; a second threadblock on the same end of a
// connection is passed to on_duplicate(connection, sending, first_tb, second_tb) and not indexed.
template <typename OnDuplicate>
ConnectionMap index_connections(const Algorithm& algo, OnDuplicate&& on_duplicate) {
  ConnectionMap connections;
  for (std::size_t r = 0; r < algo.gpus.size(); ++r) {
    const int rank = static_cast<int>(r);
    const auto& tbs = algo.gpus[r].threadblocks;
    for (std::size_t t = 0; t < tbs.size(); ++t) {
      const Threadblock& tb = tbs[t];
      const int id = static_cast<int>(t);
      if (peer_in_range(algo, rank, tb.send)) {
        const Connection conn{tb.channel, rank, tb.send};
        int& end = connections[conn].sender_tb;
        if (end < 0) {
          end = id;
        } else {
          on_duplicate(conn, true, end, id);
        }
      }
      if (peer_in_range(algo, rank, tb.recv)) {
        const Connection conn{tb.channel, tb.recv, rank};
        int& end = connections[conn].receiver_tb;
        if (end < 0) {
          end = id;
        } else {
          on_duplicate(conn, false, end, id);
        }
      }
    }
  }
  return connections;
}

// Indices of the steps of `tb` that put a message on its send connection (sending) or take one
// from its receive connection.
std::vector<int> message_steps(const Threadblock& tb, bool sending);

}  // namespace weft::ir::detail
