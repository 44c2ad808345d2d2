// libFuzzer target: the files a JIT names its code in, read from the same
// bytes: a perf-PID.map (/tmp/perf-PID.map as node, the JVM or .NET write
// it) and a jitdump (jit-PID.dump, .NET's; the pid taken from its own
// header so that its records are read). Both are looked up; every entry found
// must hold the address asked for.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "processor/symbols/jit_dump.h"
#include "processor/symbols/perf_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using pageblame::symbols::PerfMap;
  using pageblame::symbols::JitDump;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const PerfMap map = PerfMap::Parse(bytes);
  uint32_t pid = 0;
  for (int b = 0; b < 4 && 20 + b < static_cast<int>(size); ++b) pid |= uint32_t{data[20 + b]} << (8 * b);
  const absl::StatusOr<JitDump> dump = JitDump::Parse(absl::string_view(bytes.data(), bytes.size()), pid, "fuzz");
  // Addresses from the input itself, so lookups hit entries.
  for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
    uint64_t addr = 0;
    for (int b = 0; b < 8; ++b) addr |= uint64_t{data[i + b]} << (8 * b);
    for (const PerfMap* m : {&map, dump.ok() ? &dump->map() : nullptr}) {
      const PerfMap::Entry* e = m != nullptr ? m->Find(addr) : nullptr;
      if (e != nullptr && (addr < e->start || addr >= e->end)) std::abort();
    }
  }
  return 0;
}
