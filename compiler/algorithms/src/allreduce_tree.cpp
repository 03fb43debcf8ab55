// Double binary tree allreduce: half of the chunks are reduced up one binary tree and broadcast
// back down it, the other half use a second tree whose ranks are shifted by one, so that most
// ranks that are leaves in one tree are inner nodes in the other and every link carries about
// the same load. Each tree has its own channel; chunks are pipelined through the trees.
#include <vector>

#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

namespace {

struct Tree {
  int root = -1;
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
};

// A balanced binary tree over positions [lo, hi), in-order (the middle is the root); position p
// is rank label(p).
int build(Tree& tree, int lo, int hi, int parent, const std::vector<int>& label) {
  if (lo >= hi) return -1;
  const int mid = lo + (hi - lo) / 2;
  const int rank = label[static_cast<std::size_t>(mid)];
  tree.parent[static_cast<std::size_t>(rank)] = parent;
  for (const int child :
       {build(tree, lo, mid, rank, label), build(tree, mid + 1, hi, rank, label)}) {
    if (child >= 0) tree.children[static_cast<std::size_t>(rank)].push_back(child);
  }
  return rank;
}

Tree make_tree(int n, int shift) {
  Tree tree;
  tree.parent.assign(static_cast<std::size_t>(n), -1);
  tree.children.resize(static_cast<std::size_t>(n));
  std::vector<int> label(static_cast<std::size_t>(n));
  for (int pos = 0; pos < n; ++pos) label[static_cast<std::size_t>(pos)] = (pos + shift) % n;
  tree.root = build(tree, 0, n, -1, label);
  return tree;
}

// Children before parents.
void post_order(const Tree& tree, int rank, std::vector<int>& out) {
  for (const int child : tree.children[static_cast<std::size_t>(rank)])
    post_order(tree, child, out);
  out.push_back(rank);
}

}  // namespace

Program allreduce_double_binary_tree(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int per_tree = detail::chunks_or(params, 2);
  const int trees = n > 2 ? 2 : 1;  // with two ranks both trees would be the same edge
  const int chunks = per_tree * trees;
  const bool in_place = detail::in_place_or(params, true);
  Program p("allreduce_double_binary_tree", dsl::Collective::allreduce(n, chunks, in_place),
            params.options());
  if (!in_place) {
    for (int r = 0; r < n; ++r) p.chunk(r, dsl::input, 0, chunks).copy(r, dsl::output, 0);
  }
  for (int t = 0; t < trees; ++t) {
    const Tree tree = make_tree(n, t);
    std::vector<int> up;
    post_order(tree, tree.root, up);
    dsl::Hints hints;
    hints.channel = trees > 1 ? t : -1;
    for (int c = 0; c < per_tree; ++c) {
      const int k = t * per_tree + c;
      // Up: each rank reduces its children's partial sums into its own, then its parent does.
      for (const int rank : up) {
        for (const int child : tree.children[static_cast<std::size_t>(rank)]) {
          p.chunk(rank, dsl::output, k).reduce(p.chunk(child, dsl::output, k), hints);
        }
      }
      // Down: the root's result to everyone, parents before children.
      for (auto it = up.rbegin(); it != up.rend(); ++it) {
        for (const int child : tree.children[static_cast<std::size_t>(*it)]) {
          p.chunk(*it, dsl::output, k).copy(child, dsl::output, k, hints);
        }
      }
    }
  }
  return p;
}

}  // namespace weft::algorithms
