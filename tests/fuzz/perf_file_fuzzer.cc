// libFuzzer target: a file-mode perf.data through the whole loader (seeds:
// traces/*.data, tests/fuzz/seeds.cmake).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/mem_file.h"
#include "tests/fuzz/trace_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pageblame::fuzz::MemFile f(data, size);
  pageblame::fuzz::LoadAndCheck(f.path());
  return 0;
}
