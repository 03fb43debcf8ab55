#include "weft/dsl/collective.h"

#include <algorithm>

#include <fmt/format.h>

#include "weft/dsl/contents.h"
#include "weft/dsl/error.h"

namespace weft::dsl {

namespace {

constexpr int kMaxRanks = 1 << 16;

void check_shape(int ranks, int chunk_factor, int chunks_per_rank_block_multiplier,
                 std::source_location where, std::string_view call) {
  if (ranks < 1 || ranks > kMaxRanks) {
    throw DslError(where, call, fmt::format("rank count {} is not in [1, {}]", ranks, kMaxRanks));
  }
  if (chunk_factor < 1) {
    throw DslError(where, call, fmt::format("chunk factor {} must be at least 1", chunk_factor));
  }
  const std::int64_t chunks =
      static_cast<std::int64_t>(chunk_factor) * chunks_per_rank_block_multiplier;
  if (chunks >= ContentStore::kMaxChunkIndex) {
    throw DslError(where, call,
                   fmt::format("{} chunks per buffer is more than a program can trace", chunks));
  }
}

void check_root(int ranks, int root, std::source_location where, std::string_view call) {
  if (root < 0 || root >= ranks) {
    throw DslError(where, call,
                   fmt::format("root {} is not a rank (the collective has {} ranks)", root, ranks));
  }
}

}  // namespace

Collective Collective::allreduce(int ranks, int chunk_factor, bool in_place,
                                 std::source_location where) {
  check_shape(ranks, chunk_factor, 1, where, "Collective::allreduce");
  Collective c;
  c.kind_ = ir::Collective::AllReduce;
  c.name_ = "allreduce";
  c.ranks_ = ranks;
  c.chunk_factor_ = chunk_factor;
  c.in_place_ = in_place;
  return c;
}

Collective Collective::allgather(int ranks, int chunk_factor, bool in_place,
                                 std::source_location where) {
  check_shape(ranks, chunk_factor, ranks, where, "Collective::allgather");
  Collective c = allreduce(ranks, chunk_factor, in_place, where);
  c.kind_ = ir::Collective::AllGather;
  c.name_ = "allgather";
  return c;
}

Collective Collective::reducescatter(int ranks, int chunk_factor, bool in_place,
                                     std::source_location where) {
  check_shape(ranks, chunk_factor, ranks, where, "Collective::reducescatter");
  Collective c = allreduce(ranks, chunk_factor, in_place, where);
  c.kind_ = ir::Collective::ReduceScatter;
  c.name_ = "reducescatter";
  return c;
}

Collective Collective::alltoall(int ranks, int chunk_factor, bool in_place,
                                std::source_location where) {
  check_shape(ranks, chunk_factor, ranks, where, "Collective::alltoall");
  Collective c = allreduce(ranks, chunk_factor, in_place, where);
  c.kind_ = ir::Collective::AllToAll;
  c.name_ = "alltoall";
  return c;
}

Collective Collective::broadcast(int ranks, int root, int chunk_factor, bool in_place,
                                 std::source_location where) {
  check_shape(ranks, chunk_factor, 1, where, "Collective::broadcast");
  check_root(ranks, root, where, "Collective::broadcast");
  Collective c = allreduce(ranks, chunk_factor, in_place, where);
  c.kind_ = ir::Collective::Broadcast;
  c.name_ = "broadcast";
  c.root_ = root;
  return c;
}

Collective Collective::reduce(int ranks, int root, int chunk_factor, bool in_place,
                              std::source_location where) {
  check_shape(ranks, chunk_factor, 1, where, "Collective::reduce");
  check_root(ranks, root, where, "Collective::reduce");
  Collective c = allreduce(ranks, chunk_factor, in_place, where);
  c.kind_ = ir::Collective::Reduce;
  c.name_ = "reduce";
  c.root_ = root;
  return c;
}

Collective Collective::custom(CustomCollective definition, std::source_location where) {
  constexpr std::string_view call = "Collective::custom";
  check_shape(definition.ranks, 1, 1, where, call);
  const auto n = static_cast<std::size_t>(definition.ranks);
  if (definition.name.empty()) throw DslError(where, call, "a custom collective needs a name");
  if (definition.input_chunks.size() != n || definition.output_chunks.size() != n) {
    throw DslError(where, call,
                   fmt::format("input_chunks and output_chunks need one entry per rank ({}); got "
                               "{} and {}",
                               n, definition.input_chunks.size(), definition.output_chunks.size()));
  }
  for (std::size_t r = 0; r < n; ++r) {
    for (const int chunks : {definition.input_chunks[r], definition.output_chunks[r]}) {
      if (chunks < 0 || chunks >= ContentStore::kMaxChunkIndex) {
        throw DslError(where, call, fmt::format("rank {} has {} chunks in a buffer", r, chunks));
      }
    }
  }
  if (definition.in_place) {
    for (std::size_t r = 0; r < n; ++r) {
      if (definition.input_chunks[r] != definition.output_chunks[r]) {
        throw DslError(where, call,
                       fmt::format("in place, rank {}'s output is its input, but it has {} input "
                                   "chunks and {} output chunks",
                                   r, definition.input_chunks[r], definition.output_chunks[r]));
      }
    }
  }
  if (!definition.postcondition) {
    throw DslError(where, call, "a custom collective needs a postcondition");
  }
  Collective c;
  c.kind_ = ir::Collective::Custom;
  c.name_ = std::move(definition.name);
  c.ranks_ = definition.ranks;
  c.chunk_factor_ = 1;
  c.in_place_ = definition.in_place;
  c.custom_inputs_ = std::move(definition.input_chunks);
  c.custom_outputs_ = std::move(definition.output_chunks);
  c.precondition_ = std::move(definition.precondition);
  c.postcondition_ = std::move(definition.postcondition);
  // Check the postcondition names only chunks that exist, once, so that later reports can trust
  // it.
  for (int r = 0; r < c.ranks_; ++r) {
    for (int k = 0; k < c.output_chunks(r); ++k) {
      std::vector<ChunkId> chunks = c.postcondition_(r, k);
      std::sort(chunks.begin(), chunks.end());
      for (std::size_t j = 0; j < chunks.size(); ++j) {
        const ChunkId& id = chunks[j];
        if (id.rank < 0 || id.rank >= c.ranks_ || id.chunk < 0 ||
            id.chunk >= c.input_chunks(id.rank)) {
          throw DslError(where, call,
                         fmt::format("the postcondition of rank {} output[{}] names input chunk "
                                     "r{}c{}, which does not exist",
                                     r, k, id.rank, id.chunk));
        }
        if (j > 0 && chunks[j - 1] == id) {
          throw DslError(where, call,
                         fmt::format("the postcondition of rank {} output[{}] names r{}c{} twice",
                                     r, k, id.rank, id.chunk));
        }
      }
    }
  }
  return c;
}

int Collective::input_chunks(int rank) const {
  switch (kind_) {
    case ir::Collective::AllGather:
      return chunk_factor_;
    case ir::Collective::ReduceScatter:
    case ir::Collective::AllToAll:
      return ranks_ * chunk_factor_;
    case ir::Collective::Custom:
      return custom_inputs_[static_cast<std::size_t>(rank)];
    default:
      return chunk_factor_;
  }
}

int Collective::output_chunks(int rank) const {
  switch (kind_) {
    case ir::Collective::AllGather:
    case ir::Collective::AllToAll:
      return ranks_ * chunk_factor_;
    case ir::Collective::ReduceScatter:
      return chunk_factor_;
    case ir::Collective::Custom:
      return custom_outputs_[static_cast<std::size_t>(rank)];
    default:
      return chunk_factor_;
  }
}

int Collective::chunks(int rank, ir::BufferKind buffer) const {
  if (buffer == ir::BufferKind::Input) return input_chunks(rank);
  if (buffer == ir::BufferKind::Output) return output_chunks(rank);
  return 0;
}

int Collective::chunks_per_loop() const {
  switch (kind_) {
    case ir::Collective::AllGather:
    case ir::Collective::ReduceScatter:
    case ir::Collective::AllToAll:
      return ranks_ * chunk_factor_;
    case ir::Collective::Custom: {
      int most = 1;
      for (int r = 0; r < ranks_; ++r) most = std::max({most, input_chunks(r), output_chunks(r)});
      return most;
    }
    default:
      return chunk_factor_;
  }
}

bool Collective::holds_data(int rank, int index) const {
  if (rank < 0 || rank >= ranks_ || index < 0 || index >= input_chunks(rank)) return false;
  if (kind_ == ir::Collective::Custom && precondition_) return precondition_(rank, index);
  return true;
}

std::vector<ChunkId> Collective::expected(int rank, int index) const {
  std::vector<ChunkId> result;
  if (rank < 0 || rank >= ranks_ || index < 0 || index >= output_chunks(rank)) return result;
  const int c = chunk_factor_;
  auto from_every_rank = [&](int chunk) {
    for (int q = 0; q < ranks_; ++q) result.push_back({q, chunk});
  };
  switch (kind_) {
    case ir::Collective::AllReduce:
      from_every_rank(index);
      break;
    case ir::Collective::AllGather:
      result.push_back({index / c, index % c});
      break;
    case ir::Collective::ReduceScatter:
      from_every_rank(rank * c + index);
      break;
    case ir::Collective::AllToAll:
      result.push_back({index / c, rank * c + index % c});
      break;
    case ir::Collective::Broadcast:
      result.push_back({root_, index});
      break;
    case ir::Collective::Reduce:
      if (rank == root_) from_every_rank(index);
      break;
    case ir::Collective::Custom:
      result = postcondition_(rank, index);
      std::sort(result.begin(), result.end());
      break;
  }
  return result;
}

bool Collective::specified(int rank, int index) const {
  if (kind_ == ir::Collective::Reduce) return rank == root_;
  if (kind_ == ir::Collective::Custom) return !expected(rank, index).empty();
  return rank >= 0 && rank < ranks_ && index >= 0 && index < output_chunks(rank);
}

std::vector<Place> Collective::destinations(int rank, int index) const {
  std::vector<Place> result;
  if (rank < 0 || rank >= ranks_ || index < 0 || index >= input_chunks(rank)) return result;
  const int c = chunk_factor_;
  auto on_every_rank = [&](int at) {
    for (int q = 0; q < ranks_; ++q) result.push_back({q, at});
  };
  // The closed forms of expected() turned around; custom collectives are searched.
  switch (kind_) {
    case ir::Collective::AllReduce:
      on_every_rank(index);
      break;
    case ir::Collective::AllGather:
      on_every_rank(rank * c + index);
      break;
    case ir::Collective::ReduceScatter:
      result.push_back({index / c, index % c});
      break;
    case ir::Collective::AllToAll:
      result.push_back({index / c, rank * c + index % c});
      break;
    case ir::Collective::Broadcast:
      if (rank == root_) on_every_rank(index);
      break;
    case ir::Collective::Reduce:
      result.push_back({root_, index});
      break;
    case ir::Collective::Custom:
      for (int q = 0; q < ranks_; ++q) {
        for (int k = 0; k < output_chunks(q); ++k) {
          const std::vector<ChunkId> wanted = expected(q, k);
          if (std::find(wanted.begin(), wanted.end(), ChunkId{rank, index}) != wanted.end())
            result.push_back({q, k});
        }
      }
      break;
  }
  return result;
}

ir::Alias Collective::resolve(int rank, ir::BufferKind buffer, int index) const {
  if (!in_place_ || buffer == ir::BufferKind::Scratch) return {buffer, index};
  switch (kind_) {
    case ir::Collective::AllGather:
      if (buffer == ir::BufferKind::Input)
        return {ir::BufferKind::Output, rank * chunk_factor_ + index};
      break;
    case ir::Collective::ReduceScatter:
      if (buffer == ir::BufferKind::Output)
        return {ir::BufferKind::Input, rank * chunk_factor_ + index};
      break;
    default:
      // send == recv (a custom collective in place included): one buffer.
      if (buffer == ir::BufferKind::Output) return {ir::BufferKind::Input, index};
      break;
  }
  return {buffer, index};
}

CollectiveSpec Collective::custom_spec() const {
  CollectiveSpec spec;
  spec.name = name_;
  spec.ngpus = ranks_;
  spec.root = root_;
  const auto n = static_cast<std::size_t>(ranks_);
  spec.input_chunks.resize(n);
  spec.output_chunks.resize(n);
  for (int r = 0; r < ranks_; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    spec.input_chunks[ur] = input_chunks(r);
    spec.output_chunks[ur] = output_chunks(r);
    spec.expected.add_rank(output_chunks(r));
    for (int k = 0; k < output_chunks(r); ++k) spec.expected.set(r, k, expected(r, k));
  }
  return spec;
}

ir::Algorithm Collective::ir_header() const {
  ir::Algorithm algo;
  algo.collective = kind_;
  algo.collective_name =
      kind_ == ir::Collective::Custom ? name_ : std::string(ir::to_string(kind_));
  algo.ngpus = ranks_;
  algo.nchunksperloop = chunks_per_loop();
  algo.inplace = in_place_;
  algo.outofplace = !in_place_;
  algo.root = root_;
  return algo;
}

}  // namespace weft::dsl
