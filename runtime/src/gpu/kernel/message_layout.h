// Private to weft_gpu: where a message's elements sit in a FIFO slot, shared by the kernel and
// the host tests (no GPU needed to check the arithmetic). A message carries pieces [first,
// first + n) of a step, piece k of the message at payload byte k × piece_stride, its elements
// packed from there. LL and LL128 move the payload as 8-byte words; a word never straddles two
// pieces because piece_stride is a multiple of 16 and elements are at most 8 bytes.
#pragma once

#include <cstdint>

#include "weft/runtime/gpu/device_program.h"  // WEFT_HOST_DEVICE

namespace weft::gpu::device {

// Payload bytes of a message of n pieces whose pieces hold `len` elements each (the tile's
// length): all pieces but the last take a full stride.
WEFT_HOST_DEVICE inline std::uint64_t message_bytes(std::uint32_t n, std::uint64_t piece_stride,
                                                    std::uint64_t len,
                                                    std::uint64_t element_bytes) {
  return static_cast<std::uint64_t>(n - 1) * piece_stride + len * element_bytes;
}

WEFT_HOST_DEVICE inline std::uint64_t message_words(std::uint32_t n, std::uint64_t piece_stride,
                                                    std::uint64_t len,
                                                    std::uint64_t element_bytes) {
  return (message_bytes(n, piece_stride, len, element_bytes) + 7) / 8;
}

// LL128: 16 words per 128-byte line, the last one the flag.
inline constexpr int kLL128LineWords = 16;
inline constexpr int kLL128DataWords = 15;

WEFT_HOST_DEVICE inline std::uint64_t ll128_lines(std::uint32_t n, std::uint64_t piece_stride,
                                                  std::uint64_t len, std::uint64_t element_bytes) {
  return (message_bytes(n, piece_stride, len, element_bytes) + kLL128DataWords * 8 - 1) /
         (kLL128DataWords * 8);
}

// The payload word held by word `w` (0 or 1) of lane `part` (0..7) of LL128 line `line`; lane 7's
// second word is the flag and holds no payload.
WEFT_HOST_DEVICE inline std::uint64_t ll128_payload_word(std::uint64_t line, std::uint32_t part,
                                                         std::uint32_t w) {
  return line * kLL128DataWords + part * 2 + w;
}

// What payload word `word` holds: elements [element, element + count) of message piece `piece`;
// count 0 for padding.
struct WordContents {
  std::uint32_t piece = 0;
  std::uint64_t element = 0;
  std::uint32_t count = 0;
};

WEFT_HOST_DEVICE inline WordContents word_contents(std::uint64_t word, std::uint32_t n,
                                                   std::uint64_t piece_stride, std::uint64_t len,
                                                   std::uint32_t element_bytes) {
  WordContents c;
  const std::uint64_t byte = word * 8;
  c.piece = static_cast<std::uint32_t>(byte / piece_stride);
  c.element = (byte - c.piece * piece_stride) / element_bytes;
  if (c.piece >= n || c.element >= len) return c;
  const std::uint64_t per_word = 8 / element_bytes;
  c.count = static_cast<std::uint32_t>(len - c.element < per_word ? len - c.element : per_word);
  return c;
}

}  // namespace weft::gpu::device
