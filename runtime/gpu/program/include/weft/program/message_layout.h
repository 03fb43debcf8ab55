// Private to the GPU runtime: where a message's elements sit in a FIFO slot, shared by the kernel
// and the host tests (no GPU needed to check the arithmetic). A message carries pieces [first,
// first + n) of a step; piece q of the message starts at payload byte q × piece_stride and holds
// its elements packed from there. LL and LL128 move the payload as 8-byte words; a word never
// straddles two pieces because piece_stride is a multiple of 16 and elements are at most 8 bytes.
// For LL128, piece_stride is also a multiple of a line's 120 payload bytes, so every line belongs
// to one piece and the kernel walks lines piece by piece without dividing.
#pragma once

#include <cstdint>

#include "weft/program/device_abi.h"      // the protocols
#include "weft/program/device_program.h"  // WEFT_HOST_DEVICE

namespace weft::gpu::device {

// LL128: 16 words per 128-byte line, the last one the flag.
inline constexpr int kLL128LineWords = 16;
inline constexpr int kLL128DataWords = 15;
inline constexpr std::uint64_t kLL128LinePayload = kLL128DataWords * 8;  // 120 bytes

// Payload words of one piece of `len` elements.
WEFT_HOST_DEVICE inline std::uint64_t piece_words(std::uint64_t len, std::uint64_t element_bytes) {
  return (len * element_bytes + 7) / 8;
}

// LL: payload word w of piece q travels in line q × piece_stride / 8 + w of the slot (16-byte
// lines, 8 bytes of payload each). The lines a message of n pieces uses:
WEFT_HOST_DEVICE inline std::uint64_t ll_lines(std::uint32_t n, std::uint64_t piece_stride,
                                               std::uint64_t len, std::uint64_t element_bytes) {
  return static_cast<std::uint64_t>(n - 1) * (piece_stride / 8) + piece_words(len, element_bytes);
}

// LL128: payload word w of piece q sits in line q × piece_stride / 120 + w / 15, at position
// w mod 15 of that line's 15 data words.
WEFT_HOST_DEVICE inline std::uint64_t ll128_piece_lines(std::uint64_t len,
                                                        std::uint64_t element_bytes) {
  return (piece_words(len, element_bytes) + kLL128DataWords - 1) / kLL128DataWords;
}

WEFT_HOST_DEVICE inline std::uint64_t ll128_lines(std::uint32_t n, std::uint64_t piece_stride,
                                                  std::uint64_t len, std::uint64_t element_bytes) {
  return static_cast<std::uint64_t>(n - 1) * (piece_stride / kLL128LinePayload) +
         ll128_piece_lines(len, element_bytes);
}

// The payload word (within its piece) held by word `w` (0 or 1) of lane `part` (0..7) of line
// `line` of the piece; lane 7's second word is the flag and holds no payload.
WEFT_HOST_DEVICE inline std::uint64_t ll128_payload_word(std::uint64_t line, std::uint32_t part,
                                                         std::uint32_t w) {
  return line * kLL128DataWords + part * 2 + w;
}

// The elements a payload word `word` of a piece of `len` elements holds: [element, element +
// count), count 0 for padding.
struct WordContents {
  std::uint64_t element = 0;
  std::uint32_t count = 0;
};

WEFT_HOST_DEVICE inline WordContents word_contents(std::uint64_t word, std::uint64_t len,
                                                   std::uint32_t element_bytes) {
  WordContents c;
  const std::uint32_t per_word = 8 / element_bytes;
  c.element = word * per_word;
  if (c.element >= len) return c;
  c.count = static_cast<std::uint32_t>(len - c.element < per_word ? len - c.element : per_word);
  return c;
}

// The bytes at the start of a slot that a message of n pieces of `len` elements occupies, which a
// proxy forwards when the receiver is on another host (docs/architecture.md §6): Simple, up to the
// end of the last piece; LL and LL128, up to the last piece's last line. An LL message that
// rewrites its whole slot (`whole_slot`, kLLCleanPeriod) occupies all of it, so that the copy on
// the receiver's side is as clean as the sender's slot.
WEFT_HOST_DEVICE inline std::uint64_t message_bytes(int protocol, std::uint32_t n,
                                                    std::uint64_t piece_stride, std::uint64_t len,
                                                    std::uint64_t element_bytes,
                                                    std::uint64_t slot_bytes, bool whole_slot) {
  if (n == 0) return 0;
  if (protocol == kLL) {
    return whole_slot ? slot_bytes : ll_lines(n, piece_stride, len, element_bytes) * 16;
  }
  if (protocol == kLL128) {
    return ll128_lines(n, piece_stride, len, element_bytes) * kLL128LineWords * 8;
  }
  return static_cast<std::uint64_t>(n - 1) * piece_stride + len * element_bytes;
}

}  // namespace weft::gpu::device
