#include "processor/render/diff_report.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
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

// One piece's fields, in the order of the JSON object.
Json PieceJson(const regions::DiffList& list, size_t i) {
  const regions::RegionList& p = list.pieces;
  const regions::RegionText& t = p.text(i);
  Json j;
  j["start"] = Hex(p.start(i));
  j["end"] = Hex(p.end(i));
  j["bytes"] = p.end(i) - p.start(i);
  j["type"] = OrNull(t.type);
  j["state"] = OrNull(t.state);
  j["protect"] = OrNull(t.protect);
  j["usage"] = OrNull(t.usage);
  j["rss"] = OrNull(p.rss(i));
  return j;
}

Json ListJson(const regions::DiffList& list) {
  Json pieces = Json::array();
  for (size_t i = 0; i < list.pieces.size(); ++i) pieces.push_back(PieceJson(list, i));
  Json out;
  out["bytes"] = list.bytes;
  ResidentJson(list, &out);
  out["pieces"] = std::move(pieces);
  return out;
}

// Text written to a FILE in pieces of about a MiB, or kept (file null).
class Out {
 public:
  explicit Out(std::FILE* file) : file_(file) {}
  void Append(absl::string_view s) {
    text_.append(s.data(), s.size());
    if (file_ != nullptr && text_.size() >= (1 << 20)) Flush();
  }
  std::string* text() { return &text_; }
  // Writes what is kept; false if the file refused it.
  bool Flush() {
    if (file_ != nullptr && !text_.empty()) {
      ok_ &= std::fwrite(text_.data(), 1, text_.size(), file_) == text_.size();
      text_.clear();
    }
    return ok_;
  }

 private:
  std::FILE* file_;
  std::string text_;
  bool ok_ = true;
};

// `j` as DumpJson lays it out `depth` levels down (one space a level).
std::string Nested(const Json& j, int depth) {
  return absl::StrReplaceAll(DumpJson(j), {{"\n", absl::StrCat("\n", std::string(depth, ' '))}});
}

// DumpJson(PieceJson(list, i)) three levels down, made directly.
void AppendPieceJson(const regions::DiffList& list, size_t i, std::string* out) {
  const regions::RegionList& p = list.pieces;
  const regions::RegionText& t = p.text(i);
  const std::optional<uint64_t> rss = p.rss(i);
  absl::StrAppend(out, "{\n    \"start\": \"", Hex(p.start(i)), "\",\n    \"end\": \"", Hex(p.end(i)),
                  "\",\n    \"bytes\": ", p.end(i) - p.start(i));
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"type", &t.type},
                                   {"state", &t.state}, {"protect", &t.protect}, {"usage", &t.usage}}) {
    absl::StrAppend(out, ",\n    \"", key, "\": ");
    if (value->empty()) {
      out->append("null");
    } else {
      AppendJsonString(out, *value);
    }
  }
  absl::StrAppend(out, ",\n    \"rss\": ", rss ? absl::StrCat(*rss) : "null", "\n   }");
}

// DumpJson(ListJson(list)) at depth 1, written piece by piece: a list of
// millions of pieces as a DOM took a kilobyte each.
void AppendListJson(const regions::DiffList& list, Out* out) {
  Json head;
  ResidentJson(list, &head);
  out->Append(absl::StrCat("{\n  \"bytes\": ", list.bytes, ",\n  \"rss\": ", Nested(head["rss"], 2),
                           ",\n  \"rss_partly\": ", Nested(head["rss_partly"], 2), ",\n  \"pieces\": "));
  if (list.pieces.empty()) {
    out->Append("[]\n }");
    return;
  }
  std::string piece;
  for (size_t i = 0; i < list.pieces.size(); ++i) {
    piece = i == 0 ? "[\n   " : ",\n   ";
    AppendPieceJson(list, i, &piece);
    out->Append(piece);
  }
  out->Append("\n  ]\n }");
}

std::string Total(const regions::DiffList& list) {
  return absl::StrCat(GroupedNumber(list.bytes), " bytes (", HumanBytes(list.bytes), ")");
}

std::string Total(const regions::StartMatch& m) {
  return absl::StrCat(GroupedNumber(m.bytes), " bytes (", HumanBytes(m.bytes), ")");
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

void AppendTable(const regions::DiffList& list, Out* out) {
  if (list.pieces.empty()) {
    out->Append("  (none)\n");
    return;
  }
  // The rss column only for a table that has Rss: "part" marks a piece that
  // is part of a row, whose Rss is the row's, not the piece's.
  const bool rss = list.resident.has_value();
  out->Append(absl::StrFormat("  %-14s %-14s %10s%s  %-11s %-11s %-22s %6s  %s\n", "start", "end", "size",
                              rss ? absl::StrFormat(" %10s", "rss") : "", "type", "state", "protect", "line",
                              "usage"));
  // A table's cells can be paths of another process's mappings (a maps or
  // pmap table, a core): escaped as every name in text.
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : EscapeName(s); };
  const regions::RegionList& p = list.pieces;
  for (size_t i = 0; i < p.size(); ++i) {
    const regions::RegionText& t = p.text(i);
    const std::optional<uint64_t> piece_rss = p.rss(i);
    const std::string rss_cell =
        rss ? absl::StrFormat(" %10s", piece_rss ? HumanBytes(*piece_rss) : "part") : "";
    out->Append(absl::StrFormat("  %-14s %-14s %10s%s  %-11s %-11s %-22s %6d  %s\n", Hex(p.start(i)),
                                Hex(p.end(i)), HumanBytes(p.end(i) - p.start(i)), rss_cell,
                                dash(t.type), dash(t.state), dash(t.protect), p.line(i), dash(t.usage)));
  }
}

void AppendText(const regions::DiffResult& d, const std::string& a, const std::string& m, Out* out) {
  out->Append(absl::StrCat("unaccounted: ", Total(d.unaccounted), " in ", d.unaccounted.pieces.size(),
                           " pieces of ", d.unaccounted.source_regions, " regions: committed in ", a,
                           ", not known to ", m, "\n", ResidentLine(d.unaccounted, a)));
  AppendTable(d.unaccounted, out);
  out->Append(absl::StrCat("\nruntime only: ", Total(d.runtime_only), " in ", d.runtime_only.pieces.size(),
                           " pieces of ", d.runtime_only.source_regions, " regions: committed in ", m,
                           ", not known to ", a, "\n", ResidentLine(d.runtime_only, m)));
  AppendTable(d.runtime_only, out);
  int64_t delta = static_cast<int64_t>(d.start_match_unaccounted.bytes) - static_cast<int64_t>(d.unaccounted.bytes);
  out->Append(absl::StrCat(
      "\nstart-address match (the page-diff tool's rule): unaccounted ", Total(d.start_match_unaccounted), " in ",
      d.start_match_unaccounted.regions, " regions, runtime only ", Total(d.start_match_runtime_only), " in ",
      d.start_match_runtime_only.regions, " regions\n",
      "  it counts a whole region as accounted iff some region of the other table starts at the same "
      "address, so it ", delta >= 0 ? "over" : "under", "states the unaccounted bytes here by ",
      GroupedNumber(delta >= 0 ? delta : -delta),
      " (partly covered regions count whole; regions sharing only a start count as covered)\n"));
}

void AppendJson(const regions::DiffResult& d, Out* out) {
  out->Append("{\n \"unaccounted\": ");
  AppendListJson(d.unaccounted, out);
  out->Append(",\n \"runtime_only\": ");
  AppendListJson(d.runtime_only, out);
  out->Append("\n}\n");
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

bool WriteDiffJson(const regions::DiffResult& d, std::FILE* file) {
  Out out(file);
  AppendJson(d, &out);
  return out.Flush();
}

std::string DiffText(const regions::DiffResult& d, const std::string& a, const std::string& m) {
  Out out(nullptr);
  AppendText(d, a, m, &out);
  return std::move(*out.text());
}

bool WriteDiffText(const regions::DiffResult& d, const std::string& a, const std::string& m, std::FILE* file) {
  Out out(file);
  AppendText(d, a, m, &out);
  return out.Flush();
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
