// Appends little-endian values to a byte string: the writing side of
// ByteReader (byte_reader.h), for the files pageblame writes itself (the
// recording's index, snapshot files).
//
//   std::string out;
//   PutFixed<uint32_t>(&out, 7);        // ByteReader::Read(&u32)
//   PutVarint(&out, 300);               // ByteReader::ReadVarint
//   PutString(&out, "libc.so.6");       // a varint length, then the bytes
#ifndef PAGEBLAME_BASE_BYTE_WRITER_H_
#define PAGEBLAME_BASE_BYTE_WRITER_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace pageblame {

// A trivially copyable value as it lies in memory (x86-64, aarch64: little
// endian), read back by ByteReader::Read.
template <typename T>
void PutFixed(std::string* out, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out->append(bytes, sizeof(T));
}

// An unsigned LEB128 varint (at most 10 bytes).
inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A length (varint), then the bytes.
inline void PutString(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s.data(), s.size());
}

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_BYTE_WRITER_H_
