// Chunk geometry of a call (docs/architecture.md §2.2): how a collective's `count` becomes chunks,
// how large each buffer is, and how in-place calls alias the input and output buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "weft/ir/ir.h"

namespace weft::ir {

// m in `total = count × m`: ngpus for allgather, reducescatter and alltoall, else 1.
int count_multiplier(const Algorithm& algo);

// Chunks of the input ('i') and output ('o') buffer one rank really has. For the standard
// collectives they follow from nchunksperloop (the i_chunks/o_chunks written in files are not
// trusted: msccl-tools writes 0 for the aliased buffer of in-place algorithms); for custom
// collectives they are the declared ones.
int input_extent_chunks(const Algorithm& algo, int rank);
int output_extent_chunks(const Algorithm& algo, int rank);
int scratch_extent_chunks(const Algorithm& algo, int rank);
int extent_chunks(const Algorithm& algo, int rank, BufferKind buffer);

// Elements per chunk for a call of `count`, or nothing when the algorithm does not apply
// (count·m not divisible by nchunksperloop, or zero).
std::optional<std::size_t> chunk_elements(const Algorithm& algo, std::size_t count);

// Bytes of the call's total buffer, the quantity minBytes/maxBytes bound.
std::uint64_t call_bytes(const Algorithm& algo, std::size_t count, std::size_t type_size);

// In an in-place call the input buffer lies inside the output buffer (or the reverse, for
// reducescatter). A chunk of one buffer, seen as a chunk of the other.
struct Alias {
  BufferKind buffer;
  int chunk;
};
// Where chunk `chunk` of `buffer` lives in an in-place call of rank `rank`: input chunks map
// into the output (allreduce, broadcast, reduce, alltoall: same index; allgather: rank's block)
// and output chunks of reducescatter map into the input. Scratch and out-of-place calls map to
// themselves.
Alias resolve_in_place(const Algorithm& algo, int rank, BufferKind buffer, int chunk);

// Whether rank `rank`'s buffers make a call in place as NCCL defines it: allreduce, broadcast,
// reduce, alltoall send == recv; allgather send == recv + rank·count; reducescatter
// recv == send + rank·count (`count` elements of `element_bytes`). Null buffers are not in place.
bool is_in_place_call(Collective coll, int rank, const void* sendbuf, const void* recvbuf,
                      std::size_t count, std::size_t element_bytes);

}  // namespace weft::ir
