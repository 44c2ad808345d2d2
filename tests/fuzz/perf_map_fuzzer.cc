// libFuzzer target: a JIT perf-PID.map (/tmp/perf-PID.map as node, the JVM
// or .NET write it), parsed and looked up; every entry found must hold the
// address asked for.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "processor/symbols/perf_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using pageblame::symbols::PerfMap;
  const PerfMap map = PerfMap::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  // Addresses from the input itself, so lookups hit entries.
  for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
    uint64_t addr = 0;
    for (int b = 0; b < 8; ++b) addr |= uint64_t{data[i + b]} << (8 * b);
    if (const PerfMap::Entry* e = map.Find(addr)) {
      if (addr < e->start || addr >= e->end) std::abort();
    }
  }
  return 0;
}
