// Diff: the page diff between a debugger's region table and a runtime's.
//
//   ASSIGN_OR_RETURN(RegionTable a, RegionTableReader::DetectAndParse("address.output"));
//   ASSIGN_OR_RETURN(RegionTable m, RegionTableReader::DetectAndParse("maddress.output"));
//   DiffResult d = Diff(a, m);
//   // d.unaccounted.bytes: committed memory the runtime does not know about.
//
// Definitions (RegionTable::IsCommitted / IsClaimed):
//   Committed(T): regions of T with state MEM_COMMIT; every region if T's
//                 format has no state (pmap, maps, ranges).
//   Claimed(T):   every region of T except free ones (empty state in a format
//                 with state, or MEM_FREE): what T knows about at all.
//   unaccounted  = Committed(address_table) - Claimed(runtime_table)
//   runtime_only = Committed(runtime_table) - Claimed(address_table)
// The two directions are symmetric. runtime_only subtracts what the address
// table claims rather than everything it lists, because WinDbg also lists the
// free gaps: "covered by any row of any state" would always be empty there.
// Claimed rather than Committed on the subtracted side: a range the other
// table lists as reserved is known to it; the disagreement is about state,
// not about ownership.
//
// The arithmetic is on exact bounds (byte-exact, so page-exact too; WinDbg
// splits some image regions inside a page and those bounds are kept). Each
// piece is the uncovered part of one source region and carries that region's
// type/state/protect/usage and line. If source regions overlap (two tables
// pasted together, or an address list with two addresses in one page) the
// overlap is reported once, in the region that starts first. Totals are the
// sums of the pieces, hence the size of their union.
// Order: bytes descending, then start ascending (then source line).
//
// Cost: O(n log n) time for n rows in all; memory, beyond the tables, 32
// bytes a piece and, while a direction is worked out, 16 bytes a claimed
// row of the other table (its ranges, coalesced) and 8 a row of the other
// table's starts (for the seed's rule).
//
// Resident bytes (pmap -X/-XX, smaps: Region::rss per row): a row wholly
// unaccounted contributes its Rss exactly; a row only partly unaccounted
// contributes bounds (the table does not say where in the row its resident
// pages are), kept apart in DiffList::resident.
//
// For comparison, the seed tool's rule is also computed: a committed region
// counts as accounted iff some region of the other table STARTS at the same
// address (no partial coverage, no coverage by ranges that start elsewhere).
// It reproduces the seed's "Total unaccounted size: 672MB" on the peer
// samples; see docs/regions.md for why the page-exact number is smaller.
#ifndef PAGEBLAME_REGIONS_PAGE_DIFF_H_
#define PAGEBLAME_REGIONS_PAGE_DIFF_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "processor/regions/region.h"
#include "processor/regions/resident_bytes.h"

namespace pageblame::regions {

struct DiffList {
  // Disjoint; bytes descending, then start. Parts of the source table's
  // rows, sharing its texts (region_list.h: 32 bytes a piece).
  RegionList pieces;
  uint64_t bytes = 0;          // sum of pieces' sizes
  size_t source_regions = 0;   // distinct rows (by line) of the table the pieces come from
  // Resident bytes of the pieces, when the counted table has Rss (has_rss):
  // exact for rows wholly in the list (such a piece keeps the row's rss),
  // bounds for rows only partly in it (their pieces' rss is unset). See
  // ResidentBytes. Unset when the table has no Rss.
  std::optional<ResidentBytes> resident;
};

// The seed's start-address match: how many committed regions, and their
// bytes (a plain sum: regions may overlap if the source regions do, as the
// seed computes it).
struct StartMatch {
  size_t regions = 0;
  uint64_t bytes = 0;
};

struct DiffResult {
  DiffList unaccounted;   // Committed(address) - Claimed(runtime)
  DiffList runtime_only;  // Committed(runtime) - Claimed(address)
  StartMatch start_match_unaccounted;   // committed address regions whose start
                                        // is no runtime region's start
  StartMatch start_match_runtime_only;  // committed runtime regions whose start
                                        // is no address region's start
};

DiffResult Diff(const RegionTable& address_table, const RegionTable& runtime_table);

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_PAGE_DIFF_H_
