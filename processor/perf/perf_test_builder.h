// Test-only helpers that assemble perf.data records and streams byte by byte,
// for the cases the checked-in fixtures do not cover (PERF_SAMPLE_IDENTIFIER,
// READ groups, old attr sizes, EVENT_UPDATE, ...). Layouts follow
// include/uapi/linux/perf_event.h and tools/lib/perf/include/perf/event.h.
//
//   std::string rec = RecordBuilder(kRecordComm).U32(1).U32(1).Str("a", 8).Finish();
#ifndef PAGEBLAME_PERF_PERF_TEST_BUILDER_H_
#define PAGEBLAME_PERF_PERF_TEST_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <string>

namespace pageblame::perf::testing {

class RecordBuilder {
 public:
  explicit RecordBuilder(uint32_t type, uint16_t misc = 0) {
    Raw(type);
    Raw(misc);
    Raw(uint16_t{0});  // size, set by Finish()
  }
  RecordBuilder& U8(uint8_t v) { return Raw(v); }
  RecordBuilder& U16(uint16_t v) { return Raw(v); }
  RecordBuilder& U32(uint32_t v) { return Raw(v); }
  RecordBuilder& U64(uint64_t v) { return Raw(v); }
  RecordBuilder& Bytes(const std::string& b) {
    bytes_ += b;
    return *this;
  }
  // `s` NUL-padded to `width` bytes.
  RecordBuilder& Str(const std::string& s, size_t width) {
    std::string padded = s;
    padded.resize(width, '\0');
    return Bytes(padded);
  }
  size_t size() const { return bytes_.size(); }
  std::string Finish() {
    uint16_t size = static_cast<uint16_t>(bytes_.size());
    std::memcpy(&bytes_[6], &size, 2);
    return bytes_;
  }

 private:
  template <typename T>
  RecordBuilder& Raw(T v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(v));
    return *this;
  }
  std::string bytes_;
};

// A perf_event_attr of `size` bytes (64 = PERF_ATTR_SIZE_VER0, 128 = VER7).
inline std::string Attr(uint32_t size, uint32_t type, uint64_t config, uint64_t sample_type,
                        uint64_t read_format, bool sample_id_all, uint64_t regs_user = 0) {
  std::string a(size, '\0');
  auto put = [&](size_t off, const void* v, size_t n) {
    if (off + n <= a.size()) std::memcpy(&a[off], v, n);
  };
  uint64_t flags = sample_id_all ? (1ULL << 18) : 0;
  put(0, &type, 4);
  put(4, &size, 4);
  put(8, &config, 8);
  put(24, &sample_type, 8);
  put(32, &read_format, 8);
  put(40, &flags, 8);
  put(80, &regs_user, 8);
  return a;
}

inline std::string PipeHeader() {
  std::string h("PERFILE2");
  uint64_t size = 16;
  h.append(reinterpret_cast<const char*>(&size), 8);
  return h;
}

}  // namespace pageblame::perf::testing

#endif  // PAGEBLAME_PERF_PERF_TEST_BUILDER_H_
