// An unsigned LEB128 varint of at most 10 bytes (64 bits), read a byte at a
// time through `read_byte` (bool(uint8_t*): false when no byte is left):
// the one decoding ByteReader (a whole buffer) and StreamReader (a refilled
// one) share. False if it runs out or past 64 bits.
//
//   uint64_t v;
//   if (!ReadVarintWith([&](uint8_t* b) { return Read(b); }, &v)) ...
#ifndef PAGEBLAME_BASE_VARINT_H_
#define PAGEBLAME_BASE_VARINT_H_

#include <cstdint>

namespace pageblame {

template <typename ReadByte>
bool ReadVarintWith(ReadByte read_byte, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b;
    if (!read_byte(&b)) return false;
    if (shift == 63 && b > 1) return false;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_VARINT_H_
