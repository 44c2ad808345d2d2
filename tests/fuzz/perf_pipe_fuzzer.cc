// libFuzzer target: a pipe-mode perf.data stream (attrs, event formats and
// features arrive as records) through the whole loader. The first 16 bytes
// are always the pipe header, so that every input reaches the stream reader
// rather than failing at its magic.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/fuzz/mem_file.h"
#include "tests/fuzz/trace_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // perf_pipe_file_header: "PERFILE2", then its size, 16.
  static const uint8_t kHeader[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16};
  std::vector<uint8_t> stream(kHeader, kHeader + sizeof(kHeader));
  if (size > sizeof(kHeader)) stream.insert(stream.end(), data + sizeof(kHeader), data + size);
  pageblame::fuzz::MemFile f(stream.data(), stream.size());
  pageblame::fuzz::LoadAndCheck(f.path());
  return 0;
}
