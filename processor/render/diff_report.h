// `pageblame diff`: a page diff (regions::Diff) as the CLI contract's JSON
// and as text, plus the one-line notes about rows the parsers skipped.
//
//   DiffResult d = regions::Diff(address_table, runtime_table);
//   Json j = DiffJson(d);
//   // {"unaccounted": {"bytes": N, "rss": R, "rss_partly": {"rows","bytes","rss_at_least",
//   //                   "rss_at_most"},
//   //                   "pieces": [{"start","end","bytes","type","state","protect","usage","rss"}]},
//   //  "runtime_only": {...}}
//   std::string t = DiffText(d, "windbg-address.output", "sos-maddress.output");
//
// Pieces keep Diff's order (bytes descending, then start). A column the
// source table does not have (maps has no type/state) is null in JSON.
// Resident bytes (DiffList::resident): "rss" is the Rss of the rows wholly
// in the list (exact), "rss_partly" the rows partly in it (bounds); a
// piece's "rss" is its row's when the piece is the whole row. All null when
// the table has no Rss; the text then has no resident line or column.
#ifndef PAGEBLAME_RENDER_DIFF_REPORT_H_
#define PAGEBLAME_RENDER_DIFF_REPORT_H_

#include <cstdio>
#include <string>

#include "processor/regions/page_diff.h"
#include "processor/regions/region.h"
#include "processor/regions/resident_bytes.h"
#include "processor/render/origin_renderer.h"

namespace pageblame::render {

Json DiffJson(const regions::DiffResult& d);
// DumpJson(DiffJson(d)) and a newline, written to `file` as it is made (a
// DOM of millions of pieces would take a kilobyte each); false if the
// file refused it.
bool WriteDiffJson(const regions::DiffResult& d, std::FILE* file);
// The part of `r` counted in part, as JSON: {count_key: rows, "bytes",
// "rss_at_least", "rss_at_most"} (diff says "rows", attribute "regions").
Json PartlyJson(const regions::ResidentBytes& r, const char* count_key);
// Totals, a table of each direction's pieces, then the seed's start-address
// match totals with a line on why they differ.
std::string DiffText(const regions::DiffResult& d, const std::string& address_name,
                     const std::string& runtime_name);
// The same, written to `file` as it is made; false if the file refused it.
bool WriteDiffText(const regions::DiffResult& d, const std::string& address_name,
                   const std::string& runtime_name, std::FILE* file);
// "NAME: resident bytes unknown: why" (RegionTable::rss_note) or "".
std::string RssNote(const regions::RegionTable& t, const std::string& name);
// "NAME: 227 lines skipped (first: line 3: why)" or "" if nothing was skipped.
std::string SkippedNote(const regions::RegionTable& t, const std::string& name);
// 658571264 -> "658,571,264".
std::string GroupedNumber(uint64_t n);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_DIFF_REPORT_H_
