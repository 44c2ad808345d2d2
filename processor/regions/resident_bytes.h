// ResidentBytes: resident bytes of parts of table rows, when the table (pmap
// -X/-XX, smaps) gives each row's Rss for the row as a whole only.
//
//   ResidentBytes r;
//   r.Add(/*row_bytes=*/8 << 20, /*row_rss=*/6 << 20, /*part_bytes=*/8 << 20);  // whole: exact
//   r.Add(4 << 20, 1 << 20, 3 << 20);  // 3 MiB of a 4 MiB row: 0..1 MiB of it resident
//   r.rss;                              // 6 MiB, exact
//   r.at_least(), r.at_most();          // 6 MiB .. 7 MiB in all
//
// A row counted whole contributes its Rss exactly. Where the pages of a row
// lie is not in the table, so a part of `part` bytes of a row of `row`
// bytes with `rss` resident holds at least rss - (row - part) (the rest of
// the row holds at most its own size) and at most min(rss, part): bounds,
// never a proportion. A part of a row whose Rss is not known for it (an
// attribute region that is a diff piece of a larger row, or rows merged)
// counts with the bounds 0 and its size (AddUnknown). Callers pass
// rss <= row and part <= row (the parsers check Rss <= Size).
#ifndef PAGEBLAME_REGIONS_RESIDENT_BYTES_H_
#define PAGEBLAME_REGIONS_RESIDENT_BYTES_H_

#include <cstdint>

namespace pageblame::regions {

struct ResidentBytes {
  uint64_t whole_rows = 0;   // rows counted whole
  uint64_t whole_bytes = 0;  // their bytes
  uint64_t rss = 0;          // their Rss, summed: exact
  uint64_t partly_rows = 0;  // rows counted in part
  uint64_t partly_bytes = 0;     // the bytes of those parts
  uint64_t partly_at_least = 0;  // bounds on the parts' resident bytes
  uint64_t partly_at_most = 0;

  // Counts `part_bytes` of a row of `row_bytes` whose Rss is `row_rss`;
  // the whole row if part_bytes == row_bytes; nothing if part_bytes is 0.
  void Add(uint64_t row_bytes, uint64_t row_rss, uint64_t part_bytes);
  // Counts `part_bytes` whose Rss is unknown among rows that have one:
  // between 0 and part_bytes resident.
  void AddUnknown(uint64_t part_bytes);

  uint64_t at_least() const { return rss + partly_at_least; }
  uint64_t at_most() const { return rss + partly_at_most; }
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_RESIDENT_BYTES_H_
