// Test-only: a perf.data cut into chunk files at record boundaries, as
// `perf record --switch-output` cuts its output (each chunk a copy of the
// file whose data section is one part; a later part led by a FINISHED_INIT
// record, the end of perf's re-synthesized preamble; the feature table moved
// behind each part). For -z traces the parts are cut between COMPRESSED
// records, so a later chunk continues the earlier's zstd stream, as perf's do.
//
//   std::vector<std::string> chunks = Split("traces/alloc-dwarf.data", dir, 3);
//   // {"DIR/T.2026112901450200", "DIR/T.2026112901450201", "DIR/T.2026112901450202"}
#ifndef PAGEBLAME_PERF_CHUNK_SPLIT_FOR_TEST_H_
#define PAGEBLAME_PERF_CHUNK_SPLIT_FOR_TEST_H_

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pageblame::perf::testing {

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline uint64_t U64(const std::string& b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
inline void PutU64(std::string* b, size_t at, uint64_t v) { std::memcpy(&(*b)[at], &v, 8); }

// perf_file_header: data section at 40 (offset, size); the feature bitmap at
// 72 (32 bytes); the feature table (16 bytes per feature) right after the data.
struct Layout {
  uint64_t data_begin, data_end, table_bytes;
};

inline Layout LayoutOf(const std::string& f) {
  uint64_t features = 0;
  for (size_t i = 0; i < 4; ++i) features += __builtin_popcountll(U64(f, 72 + 8 * i));
  return {U64(f, 40), U64(f, 40) + U64(f, 48), 16 * features};
}

// The offsets of the top-level records' starts that split [begin, end) into
// about `parts` equal parts.
inline std::vector<uint64_t> Cuts(const std::string& f, const Layout& l, int parts) {
  std::vector<uint64_t> starts;
  for (uint64_t at = l.data_begin; at + 8 <= l.data_end;) {
    uint16_t size = 0;
    std::memcpy(&size, f.data() + at + 6, 2);
    if (size < 8) break;
    starts.push_back(at);
    at += size;
  }
  std::vector<uint64_t> cuts;
  for (int k = 1; k < parts; ++k) {
    const uint64_t want = l.data_begin + (l.data_end - l.data_begin) * k / parts;
    for (uint64_t s : starts) {
      // Room for this part's feature table behind it, and for the next
      // part's FINISHED_INIT before it.
      if (s >= want && s + l.table_bytes <= l.data_end && s - 8 > (cuts.empty() ? l.data_begin : cuts.back())) {
        cuts.push_back(s);
        break;
      }
    }
  }
  return cuts;
}

// Writes `trace` as chunk files DIR/T.<stamp>: each a copy of the file whose
// data section is one part (a later part led by a FINISHED_INIT record, the
// end of perf's preamble), the feature table moved behind it.
inline std::vector<std::string> Split(const std::string& trace, const std::string& dir, int parts) {
  const std::string f = ReadAll(trace);
  const Layout l = LayoutOf(f);
  std::vector<uint64_t> bounds = Cuts(f, l, parts);
  bounds.insert(bounds.begin(), l.data_begin);
  bounds.push_back(l.data_end);
  const std::string table = f.substr(l.data_end, l.table_bytes);
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    std::string c = f;
    uint64_t begin = bounds[i];
    if (i > 0) {
      begin -= 8;
      const uint32_t type = 82;  // PERF_RECORD_FINISHED_INIT
      const uint16_t misc = 0, size = 8;
      std::memcpy(&c[begin], &type, 4);
      std::memcpy(&c[begin + 4], &misc, 2);
      std::memcpy(&c[begin + 6], &size, 2);
    }
    PutU64(&c, 40, begin);
    PutU64(&c, 48, bounds[i + 1] - begin);
    c.replace(bounds[i + 1], table.size(), table);
    out.push_back(dir + "/T." + std::to_string(2026112901450200 + i));
    std::ofstream(out.back(), std::ios::binary) << c;
  }
  return out;
}

}  // namespace pageblame::perf::testing

#endif  // PAGEBLAME_PERF_CHUNK_SPLIT_FOR_TEST_H_
