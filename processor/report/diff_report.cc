#include "processor/report/diff_report.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/report/syscall_format.h"

namespace pageblame::report {
namespace {

Json OrNull(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

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
    pieces.push_back(std::move(j));
  }
  Json out;
  out["bytes"] = list.bytes;
  out["pieces"] = std::move(pieces);
  return out;
}

// Distinct source regions (by line) the pieces come from.
size_t SourceRegions(const regions::DiffList& list) {
  absl::flat_hash_set<int> lines;
  for (const regions::Region& r : list.pieces) lines.insert(r.line);
  return lines.size();
}

std::string Total(const regions::DiffList& list) {
  return absl::StrCat(GroupedNumber(list.bytes), " bytes (", HumanBytes(list.bytes), ")");
}

std::string Table(const regions::DiffList& list) {
  if (list.pieces.empty()) return "  (none)\n";
  std::string out = absl::StrFormat("  %-14s %-14s %10s  %-11s %-11s %-22s %6s  %s\n", "start", "end", "size",
                                    "type", "state", "protect", "line", "usage");
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (const regions::Region& r : list.pieces) {
    absl::StrAppend(&out, absl::StrFormat("  %-14s %-14s %10s  %-11s %-11s %-22s %6d  %s\n", Hex(r.start),
                                          Hex(r.end), HumanBytes(r.size()), dash(r.type), dash(r.state),
                                          dash(r.protect), r.line, dash(r.usage)));
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

Json DiffJson(const regions::DiffResult& d) {
  Json out;
  out["unaccounted"] = ListJson(d.unaccounted);
  out["runtime_only"] = ListJson(d.runtime_only);
  return out;
}

std::string DiffText(const regions::DiffResult& d, const std::string& a, const std::string& m) {
  std::string out = absl::StrCat(
      "unaccounted: ", Total(d.unaccounted), " in ", d.unaccounted.pieces.size(), " pieces of ",
      SourceRegions(d.unaccounted), " regions: committed in ", a, ", not known to ", m, "\n",
      Table(d.unaccounted), "\nruntime only: ", Total(d.runtime_only), " in ", d.runtime_only.pieces.size(),
      " pieces of ", SourceRegions(d.runtime_only), " regions: committed in ", m, ", not known to ", a, "\n",
      Table(d.runtime_only));
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

std::string SkippedNote(const regions::RegionTable& t, const std::string& name) {
  if (t.skipped == 0) return "";
  std::string out = absl::StrCat(name, ": ", t.skipped, t.skipped == 1 ? " line" : " lines", " skipped");
  if (!t.skip_reasons.empty()) absl::StrAppend(&out, " (first: line ", t.skip_reasons.front(), ")");
  return out;
}

}  // namespace pageblame::report
