// libFuzzer target: every region-table parser (detection picks one; text in
// any encoding, ELF core files) and the merge `attribute` applies to the
// rows. Every row must be a non-empty range; merged regions must be disjoint;
// rss within its row, on all rows or none; a diff's resident bounds in order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "processor/regions/page_diff.h"
#include "processor/regions/region_merger.h"
#include "processor/regions/region_table_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pageblame::regions;
  auto table = RegionTableReader::ParseString(
      std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!table.ok()) return 0;
  for (const Region& r : table->regions) {
    if (r.start >= r.end) std::abort();
    // Rss: within the row, and on every row or none.
    if (r.rss && *r.rss > r.size()) std::abort();
    if (r.rss.has_value() != table->has_rss) std::abort();
  }
  // Resident bytes of a diff against a fixed range: bounds in order.
  auto cover = RegionTableReader::ParseString("0x7f0000000000-0x7f8000000000\n", "cover");
  if (!cover.ok()) std::abort();
  const DiffList u = Diff(*table, *cover).unaccounted;
  if (u.resident.has_value() != table->has_rss) std::abort();
  if (u.resident && (u.resident->partly_at_least > u.resident->partly_at_most ||
                     u.resident->partly_at_most > u.resident->partly_bytes ||
                     u.resident->rss > u.resident->whole_bytes)) {
    std::abort();
  }
  MergedRegions m = RegionMerger::Merge(table->regions.ToVector());
  uint64_t total = 0;
  for (const Region& r : m.regions) {
    if (r.start >= r.end || r.size() > UINT64_MAX - total) std::abort();  // disjoint: cannot wrap
    total += r.size();
  }
  return 0;
}
