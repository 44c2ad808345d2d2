// libFuzzer target: every region-table parser (detection picks one; text in
// any encoding, ELF core files) and the merge `attribute` applies to the
// rows. Every row must be a non-empty range; merged regions must be disjoint.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "processor/regions/region_merger.h"
#include "processor/regions/region_table_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pageblame::regions;
  auto table = RegionTableReader::ParseString(
      std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!table.ok()) return 0;
  for (const Region& r : table->regions) {
    if (r.start >= r.end) std::abort();
  }
  MergedRegions m = RegionMerger::Merge(table->regions);
  uint64_t total = 0;
  for (const Region& r : m.regions) {
    if (r.start >= r.end || r.size() > UINT64_MAX - total) std::abort();  // disjoint: cannot wrap
    total += r.size();
  }
  return 0;
}
