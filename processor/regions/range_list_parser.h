// RangeListParser: a hand-written list of addresses and ranges, one per line.
//
//   # pages the plugin should watch
//   0x78e8c18e7000            -> the page holding it: [0x78e8c18e7000, +4096)
//   78e8fcafe123              -> [0x78e8fcafe000, 0x78e8fcaff000)
//   7d18`98000000-7d18`98135000
//   0x1000,0x3000             -> [0x1000, 0x3000): END is exclusive
//   0x1000 0x3000
//
// Addresses in any ParseAddress() form; '-' / ',' / whitespace separate a
// range's ends; '#' starts a comment (one after an entry is kept as its
// usage). Every other line is an error (this is
// the fallback format, so junk must not turn into regions). No type/state.
#ifndef PAGEBLAME_REGIONS_RANGE_LIST_PARSER_H_
#define PAGEBLAME_REGIONS_RANGE_LIST_PARSER_H_

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

class RangeListParser {
 public:
  static constexpr absl::string_view kFormat = "ranges";

  // True if the line (comment stripped) has the form of one address or one
  // range, even one that ParseEntry rejects (END not above START): the
  // detection signature, so such a line is reported by its line number.
  static bool LooksLikeEntry(absl::string_view line);
  // True if the line starts with an address: an attempt at an entry, for
  // choosing which parser explains a table no signature matched.
  static bool StartsLikeEntry(absl::string_view line);
  // [start, end) of one entry; InvalidArgument if it is not one, or if END is
  // not above START, or the page of a lone address runs past 2^64.
  static absl::StatusOr<std::pair<uint64_t, uint64_t>> ParseEntry(absl::string_view line);

  static absl::StatusOr<RegionTable> Parse(const TextLines& text);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_RANGE_LIST_PARSER_H_
