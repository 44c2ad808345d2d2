// GNU build ids as perf stores them.
//
// perf carries build ids as raw bytes: 20 for the usual SHA-1 note, but the
// HEADER_BUILD_ID feature stores them in a 24-byte field (struct
// perf_record_header_build_id, tools/perf/util/header.c) that older files pad
// with zeros. The cache layouts (~/.debug/.build-id/xx/rest,
// /usr/lib/debug/.build-id/xx/rest.debug) use the lowercase hex of the id.
//
//   std::string hex = BuildIdToHex(raw);            // "93ac61ec...8a40"
//   if (BuildIdMatches(from_trace, from_elf)) ...   // tolerant of perf's padding
#ifndef PAGEBLAME_SYMBOLS_BUILD_ID_H_
#define PAGEBLAME_SYMBOLS_BUILD_ID_H_

#include <string>
#include <string_view>

namespace pageblame::symbols {

// Drops perf's zero padding: an id longer than 20 bytes whose bytes past 20
// are all zero is the 20-byte id. Anything else is returned unchanged.
std::string NormalizeBuildId(std::string_view raw);

// Lowercase hex of the normalized id ("" for an empty id).
std::string BuildIdToHex(std::string_view raw);

// True if `wanted` (from the trace) names the same build as `actual` (from an
// ELF note): equal after normalization, or `wanted` is `actual` followed by
// zero padding (an md5 or other short id in perf's 24-byte field).
bool BuildIdMatches(std::string_view wanted, std::string_view actual);

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_BUILD_ID_H_
