// Reads a whole perf.data the way replay does (Next + the Parse* call for
// each record) and prints counts and throughput. A tool for measuring the
// reader on big traces and for eyeballing a trace against `perf report -D`:
//
//   build/bin/perf_reader_bench trace.data        # or - for stdin
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "processor/perf/perf_reader.h"

namespace pageblame::perf {
namespace {

int Run(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  auto opened = PerfReader::Open(path);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", std::string(opened.status().message()).c_str());
    return 1;
  }
  PerfReader& r = **opened;
  std::map<uint32_t, uint64_t> by_type;
  std::map<const EventAttr*, uint64_t> by_attr;
  uint64_t frames = 0, raw_bytes = 0, errors = 0;
  RawRecord rec;
  Sample s;
  CommRecord comm;
  TaskRecord task;
  MmapRecord mmap;
  LostRecord lost;
  while (true) {
    auto more = r.Next(&rec);
    if (!more.ok()) {
      std::fprintf(stderr, "%s\n", std::string(more.status().message()).c_str());
      return 1;
    }
    if (!*more) break;
    ++by_type[rec.type];
    absl::Status st;
    switch (rec.type) {
      case kRecordSample:
        st = r.ParseSample(rec, &s);
        if (st.ok()) {
          ++by_attr[s.attr];
          frames += s.callchain.size();
          raw_bytes += s.raw.size();
        }
        break;
      case kRecordComm: st = r.ParseComm(rec, &comm); break;
      case kRecordFork:
      case kRecordExit: st = r.ParseTask(rec, &task); break;
      case kRecordMmap:
      case kRecordMmap2: st = r.ParseMmap(rec, &mmap); break;
      case kRecordLost:
      case kRecordLostSamples: st = r.ParseLost(rec, &lost); break;
      default: break;
    }
    if (!st.ok() && errors++ < 5) {
      std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s mode, %zu attrs, %llu bytes in %.3f s (%.0f MB/s)\n",
              r.info().pipe_mode ? "pipe" : "file", r.info().attrs.size(),
              static_cast<unsigned long long>(r.bytes_read()), secs,
              r.bytes_read() / secs / 1e6);
  for (const auto& [type, n] : by_type) {
    std::printf("  type %3u: %llu\n", type, static_cast<unsigned long long>(n));
  }
  for (const auto& [attr, n] : by_attr) {
    std::printf("  %-32s %llu samples\n", attr->name.c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("  callchain entries %llu, raw bytes %llu, parse errors %llu\n",
              static_cast<unsigned long long>(frames), static_cast<unsigned long long>(raw_bytes),
              static_cast<unsigned long long>(errors));
  if (const CompressionStats* c = r.compression_stats()) {
    std::printf("  compressed: %llu COMPRESSED records, %llu zstd bytes -> %llu bytes, "
                "%llu records cut across two\n",
                static_cast<unsigned long long>(c->compressed_records),
                static_cast<unsigned long long>(c->compressed_bytes),
                static_cast<unsigned long long>(c->decompressed_bytes),
                static_cast<unsigned long long>(c->straddling_records));
  }
  return 0;
}

}  // namespace
}  // namespace pageblame::perf

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PERF_DATA|-\n", argv[0]);
    return 2;
  }
  return pageblame::perf::Run(argv[1]);
}
