// Region and RegionTable: what every region-table parser produces.
//
// A Region is one row of a debugger / runtime / kernel region listing, reduced
// to a half-open address range [start, end) plus the row's descriptive columns
// as printed (any may be empty), and the 1-based line it came from so errors
// and reports can point back at the source.
//
//   ASSIGN_OR_RETURN(RegionTable t, RegionTableReader::DetectAndParse(path));
//   for (const Region& r : t.regions)
//     if (t.IsCommitted(r)) committed += r.size();
//
// Rows a parser chose not to use (prompts, summary tables after the list, the
// second section of a page-diff result) are counted in `skipped`, with the
// first few reasons kept; rows that look like data but do not parse are errors,
// never skips, so a table never yields a silently wrong total.
#ifndef PAGEBLAME_REGIONS_REGION_H_
#define PAGEBLAME_REGIONS_REGION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace pageblame::regions {

// The page size assumed for one-address "page" entries of an address list.
// x86-64 and arm64-with-4K-pages; the tables themselves carry exact bounds.
inline constexpr uint64_t kPageSize = 4096;

struct Region {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  std::string type;     // WinDbg/SOS "MEM_PRIVATE", "MEM_IMAGE"; empty elsewhere
  std::string state;    // "MEM_COMMIT", "MEM_RESERVE", ...; empty if unknown
  std::string protect;  // "PAGE_READWRITE" or a kernel perm string "rw-p"
  std::string usage;    // "<unknown> [....]", "Image [dotnet; \"/path\"]", a path
  int line = 0;         // 1-based source line
  // Other source lines whose rows were merged into this region (RegionMerger:
  // overlapping rows), ascending; empty for a row as parsed.
  std::vector<int> merged_lines;
  // Resident bytes of exactly [start, end), from the table's own Rss (pmap
  // -X/-XX, smaps; KiB there). Unset when unknown: the table has no such
  // column (maps, WinDbg, SOS, ranges, cores), the row was merged with
  // another, or the region is only part of a row (a diff piece). Never 0 for
  // "unknown".
  std::optional<uint64_t> rss;

  uint64_t size() const { return end - start; }
};

}  // namespace pageblame::regions

#include "processor/regions/region_list.h"  // needs Region; RegionTable holds one

namespace pageblame::regions {

struct RegionTable {
  static constexpr int kMaxSkipReasons = 5;

  // "windbg-address", "sos-maddress", "page-diff", "pmap", "maps", "smaps",
  // "ranges".
  std::string format;
  // True for formats with a State column (WinDbg, SOS, page-diff, cores).
  // Then a row is committed only if its state says MEM_COMMIT (WinDbg prints
  // free rows with an empty state). Formats without state (pmap, maps,
  // ranges) list mapped memory only: every row counts as committed but those
  // no access reaches (protection "---p", reservations).
  bool has_state = false;
  // True if every row carries rss (pmap with an Rss column, smaps). A table
  // has it for all rows or for none.
  bool has_rss = false;
  // Why a table of a format that can carry Rss has none (a headerless pmap
  // whose Rss column cannot be identified); empty otherwise.
  std::string rss_note;
  // The rows, compactly (region_list.h): rows[i] is a Region by value.
  RegionList regions;
  int skipped = 0;
  std::vector<std::string> skip_reasons;  // "LINE: why", first kMaxSkipReasons

  // Counts a skipped line, remembering the reason if fewer than
  // kMaxSkipReasons are kept yet.
  void Skip(int line, absl::string_view reason);

  // Committed memory: what a diff compares (see above).
  bool IsCommitted(const Region& r) const;
  bool IsCommitted(const RegionText& t) const;
  // Any allocation the table knows about, whatever its state: everything but
  // free rows. A runtime that lists a range as reserved still "knows" it.
  bool IsClaimed(const Region& r) const;
  bool IsClaimed(const RegionText& t) const;
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_REGION_H_
