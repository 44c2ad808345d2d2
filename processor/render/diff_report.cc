#include "processor/render/diff_report.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"

namespace pageblame::render {
namespace {

Json OrNull(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }
Json OrNull(const std::optional<uint64_t>& n) { return n ? Json(*n) : Json(nullptr); }

// The list's resident bytes: "rss" (rows wholly in the list, exact) and
// "rss_partly" (rows partly in it: their parts' bytes and bounds).
void ResidentJson(const regions::DiffList& list, Json* out) {
  (*out)["rss"] = nullptr;
  (*out)["rss_partly"] = nullptr;
  if (!list.resident) return;
  const regions::ResidentBytes& r = *list.resident;
  (*out)["rss"] = r.rss;
  (*out)["rss_partly"] = PartlyJson(r, "rows");
}

Json ListJson(const regions::DiffList& list) {
  Json pieces = Json::array();
  for (const regions::Region& r : list.pieces) {
    Json j;
    j["start"] = Hex(r.start);
    j["end"] = Hex(r.end);
    j["bytes"] = r.size();
    j["type"] = OrNull(r.type);
    j["state"] = OrNull(r.state);
    j["protect"] = OrNull(r.protect);
    j["usage"] = OrNull(r.usage);
    j["rss"] = OrNull(r.rss);
    pieces.push_back(std::move(j));
  }
  Json out;
  out["bytes"] = list.bytes;
  ResidentJson(list, &out);
  out["pieces"] = std::move(pieces);
  return out;
}

std::string Total(const regions::DiffList& list) {
  return absl::StrCat(GroupedNumber(list.bytes), " bytes (", HumanBytes(list.bytes), ")");
}

// "  resident: ..." under a list's total, when its table has Rss.
std::string ResidentLine(const regions::DiffList& list, const std::string& table) {
  if (!list.resident) return "";
  const regions::ResidentBytes& r = *list.resident;
  std::string out = absl::StrCat("  resident (", table, "'s Rss): ", GroupedNumber(r.rss), " bytes (",
                                 HumanBytes(r.rss), ") in the ", r.whole_rows,
                                 r.whole_rows == 1 ? " row" : " rows", " wholly in this list");
  if (r.partly_rows > 0) {
    absl::StrAppend(&out, "; the ", r.partly_rows, r.partly_rows == 1 ? " row" : " rows",
                    " partly in it add ", HumanBytes(r.partly_bytes), ", of which between ",
                    HumanBytes(r.partly_at_least), " and ", HumanBytes(r.partly_at_most),
                    " is resident (the table does not say where in a row its pages are)");
  }
  return out + "\n";
}

std::string Table(const regions::DiffList& list) {
  if (list.pieces.empty()) return "  (none)\n";
  // The rss column only for a table that has Rss: "part" marks a piece that
  // is part of a row, whose Rss is the row's, not the piece's.
  const bool rss = list.resident.has_value();
  auto rss_cell = [&](const regions::Region& r) {
    if (!rss) return std::string();
    return absl::StrFormat(" %10s", r.rss ? HumanBytes(*r.rss) : "part");
  };
  std::string out = absl::StrFormat("  %-14s %-14s %10s%s  %-11s %-11s %-22s %6s  %s\n", "start", "end", "size",
                                    rss ? absl::StrFormat(" %10s", "rss") : "", "type", "state", "protect",
                                    "line", "usage");
  // A table's cells can be paths of another process's mappings (a maps or
  // pmap table, a core): escaped as every name in text.
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : EscapeName(s); };
  for (const regions::Region& r : list.pieces) {
    absl::StrAppend(&out, absl::StrFormat("  %-14s %-14s %10s%s  %-11s %-11s %-22s %6d  %s\n", Hex(r.start),
                                          Hex(r.end), HumanBytes(r.size()), rss_cell(r), dash(r.type),
                                          dash(r.state), dash(r.protect), r.line, dash(r.usage)));
  }
  return out;
}

}  // namespace

std::string GroupedNumber(uint64_t n) {
  std::string digits = absl::StrCat(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

Json PartlyJson(const regions::ResidentBytes& r, const char* count_key) {
  Json partly;
  partly[count_key] = r.partly_rows;
  partly["bytes"] = r.partly_bytes;
  partly["rss_at_least"] = r.partly_at_least;
  partly["rss_at_most"] = r.partly_at_most;
  return partly;
}

Json DiffJson(const regions::DiffResult& d) {
  Json out;
  out["unaccounted"] = ListJson(d.unaccounted);
  out["runtime_only"] = ListJson(d.runtime_only);
  return out;
}

std::string DiffText(const regions::DiffResult& d, const std::string& a, const std::string& m) {
  std::string out = absl::StrCat(
      "unaccounted: ", Total(d.unaccounted), " in ", d.unaccounted.pieces.size(), " pieces of ",
      d.unaccounted.source_regions, " regions: committed in ", a, ", not known to ", m, "\n",
      ResidentLine(d.unaccounted, a), Table(d.unaccounted), "\nruntime only: ", Total(d.runtime_only), " in ",
      d.runtime_only.pieces.size(), " pieces of ", d.runtime_only.source_regions, " regions: committed in ", m,
      ", not known to ", a, "\n", ResidentLine(d.runtime_only, m), Table(d.runtime_only));
  int64_t delta = static_cast<int64_t>(d.start_match_unaccounted.bytes) - static_cast<int64_t>(d.unaccounted.bytes);
  absl::StrAppend(
      &out, "\nstart-address match (the page-diff tool's rule): unaccounted ",
      Total(d.start_match_unaccounted), " in ", d.start_match_unaccounted.pieces.size(),
      " regions, runtime only ", Total(d.start_match_runtime_only), " in ",
      d.start_match_runtime_only.pieces.size(), " regions\n",
      "  it counts a whole region as accounted iff some region of the other table starts at the same "
      "address, so it ", delta >= 0 ? "over" : "under", "states the unaccounted bytes here by ",
      GroupedNumber(delta >= 0 ? delta : -delta),
      " (partly covered regions count whole; regions sharing only a start count as covered)\n");
  return out;
}

std::string RssNote(const regions::RegionTable& t, const std::string& name) {
  if (t.rss_note.empty()) return "";
  return absl::StrCat(name, ": resident bytes unknown: ", t.rss_note);
}

std::string SkippedNote(const regions::RegionTable& t, const std::string& name) {
  if (t.skipped == 0) return "";
  std::string out = absl::StrCat(name, ": ", t.skipped, t.skipped == 1 ? " line" : " lines", " skipped");
  if (!t.skip_reasons.empty()) absl::StrAppend(&out, " (first: line ", t.skip_reasons.front(), ")");
  return out;
}

}  // namespace pageblame::render
