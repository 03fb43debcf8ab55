#include "weft/ir/geometry.h"

#include <algorithm>

namespace weft::ir {

int count_multiplier(const Algorithm& algo) {
  switch (algo.collective) {
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
      return algo.ngpus;
    default:
      return 1;
  }
}

namespace {
const Gpu* find_gpu(const Algorithm& algo, int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= algo.gpus.size()) return nullptr;
  return &algo.gpus[static_cast<std::size_t>(rank)];
}

int per_rank_block(const Algorithm& algo) {
  return algo.ngpus > 0 ? algo.nchunksperloop / algo.ngpus : 0;
}
}  // namespace

int input_extent_chunks(const Algorithm& algo, int rank) {
  switch (algo.collective) {
    case Collective::AllGather:
      return per_rank_block(algo);
    case Collective::Custom: {
      const Gpu* gpu = find_gpu(algo, rank);
      return gpu ? gpu->input_chunks : 0;
    }
    default:
      return algo.nchunksperloop;
  }
}

int output_extent_chunks(const Algorithm& algo, int rank) {
  switch (algo.collective) {
    case Collective::ReduceScatter:
      return per_rank_block(algo);
    case Collective::Custom: {
      const Gpu* gpu = find_gpu(algo, rank);
      return gpu ? gpu->output_chunks : 0;
    }
    default:
      return algo.nchunksperloop;
  }
}

int scratch_extent_chunks(const Algorithm& algo, int rank) {
  const Gpu* gpu = find_gpu(algo, rank);
  return gpu ? gpu->scratch_chunks : 0;
}

int extent_chunks(const Algorithm& algo, int rank, BufferKind buffer) {
  switch (buffer) {
    case BufferKind::Input: return input_extent_chunks(algo, rank);
    case BufferKind::Output: return output_extent_chunks(algo, rank);
    case BufferKind::Scratch: return scratch_extent_chunks(algo, rank);
    case BufferKind::None: break;
  }
  return 0;
}

std::optional<std::size_t> chunk_elements(const Algorithm& algo, std::size_t count) {
  const std::size_t total = count * static_cast<std::size_t>(count_multiplier(algo));
  if (algo.nchunksperloop <= 0 || total == 0) return std::nullopt;
  const auto chunks = static_cast<std::size_t>(algo.nchunksperloop);
  if (total % chunks != 0) return std::nullopt;
  return total / chunks;
}

std::uint64_t call_bytes(const Algorithm& algo, std::size_t count, std::size_t type_size) {
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(count_multiplier(algo)) *
         type_size;
}

Alias resolve_in_place(const Algorithm& algo, int rank, BufferKind buffer, int chunk) {
  switch (algo.collective) {
    case Collective::AllGather:
      // send == recv + rank·count: the input is the rank's block of the output.
      if (buffer == BufferKind::Input) {
        return {BufferKind::Output, rank * per_rank_block(algo) + chunk};
      }
      break;
    case Collective::ReduceScatter:
      // recv == send + rank·count: the output is the rank's block of the input.
      if (buffer == BufferKind::Output) {
        return {BufferKind::Input, rank * per_rank_block(algo) + chunk};
      }
      break;
    default:
      // send == recv: one buffer.
      if (buffer == BufferKind::Output) return {BufferKind::Input, chunk};
      break;
  }
  return {buffer, chunk};
}

bool is_in_place_call(Collective coll, int rank, const void* sendbuf, const void* recvbuf,
                      std::size_t count, std::size_t element_bytes) {
  if (sendbuf == nullptr || recvbuf == nullptr) return false;
  // Compared as integers: the rank's block may lie outside the other buffer's allocation.
  const auto send = reinterpret_cast<std::uintptr_t>(sendbuf);
  const auto recv = reinterpret_cast<std::uintptr_t>(recvbuf);
  const std::uintptr_t block = static_cast<std::uintptr_t>(std::max(rank, 0)) * count * element_bytes;
  switch (coll) {
    case Collective::AllGather:
      return send == recv + block;
    case Collective::ReduceScatter:
      return recv == send + block;
    default:
      return send == recv;
  }
}

}  // namespace weft::ir
