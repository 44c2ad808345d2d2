#include "processor/regions/runtime_table_builder.h"

#include <algorithm>

#include "processor/regions/core_file_parser.h"
#include "processor/regions/range_set.h"

namespace pageblame::regions {
namespace {

// The OS table's regions by start, and what each says in maddress's terms.
class OsView {
 public:
  // The rows are copied out of the table (which hands out copies, not
  // references: region_list.h) once, and pointed into.
  explicit OsView(const RegionTable& t) : table_(t), rows_(t.regions.ToVector()) {
    for (const Region& r : rows_) sorted_.push_back(&r);
    std::sort(sorted_.begin(), sorted_.end(), [](const Region* a, const Region* b) { return a->start < b->start; });
  }

  // Regions overlapping [start, end), in address order.
  std::vector<const Region*> Overlapping(uint64_t start, uint64_t end) const {
    std::vector<const Region*> out;
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), start,
                               [](const Region* r, uint64_t a) { return r->end <= a; });
    // Regions are sorted by start; one that starts before `start` may still
    // reach past it, so step back over any that do.
    while (it != sorted_.begin() && (*(it - 1))->end > start) --it;
    for (; it != sorted_.end() && (*it)->start < end; ++it)
      if ((*it)->end > start) out.push_back(*it);
    return out;
  }

  // The regions that map `path` (or `path` + " (deleted)"), in address order.
  std::vector<const Region*> OfFile(const std::string& path) const {
    std::vector<const Region*> out;
    for (const Region* r : sorted_) {
      const std::string p = Path(*r);
      if (p == path || p == path + " (deleted)") out.push_back(r);
    }
    return out;
  }

  // The mapped file's path; "" for anonymous memory and [heap]-like names.
  std::string Path(const Region& r) const {
    if (table_.format == CoreFileParser::kFormat) return r.type == "MEM_MAPPED" ? r.usage : "";
    return r.usage.empty() || r.usage[0] == '[' ? "" : r.usage;
  }

  RuntimeRow Row(const Region& r, uint64_t start, uint64_t end) const {
    RuntimeRow row;
    row.start = start;
    row.end = end;
    row.state = table_.IsCommitted(r) ? "MEM_COMMIT" : "MEM_RESERVE";
    row.type = Path(r).empty() ? "MEM_PRIVATE" : "MEM_MAPPED";
    row.protect = table_.has_state ? r.protect : Protect(r.protect);
    return row;
  }

 private:
  // "rw-p" -> PAGE_READWRITE, as the core reader names p_flags.
  static std::string Protect(absl::string_view perms) {
    if (perms.size() < 3) return "";
    uint32_t flags = (perms[0] == 'r' ? 4u : 0u) | (perms[1] == 'w' ? 2u : 0u) | (perms[2] == 'x' ? 1u : 0u);
    return CoreFileParser::Protect(flags);
  }

  const RegionTable& table_;
  const std::vector<Region> rows_;
  std::vector<const Region*> sorted_;  // into rows_
};

// Every mapping of the image's file (a ReadyToRun .dll is mapped twice:
// flat, and section by section where its code runs); ClrMD's size only
// counts what it leaves out.
void AddImage(const OsView& os, const ClrImage& image, RangeSet& covered, RuntimeTable& out) {
  RangeSet own;
  for (const Region* r : os.OfFile(image.path)) {
    for (auto [s, e] : covered.Gaps(r->start, r->end)) {
      RuntimeRow row = os.Row(*r, s, e);
      row.kind = "Image";
      row.type = "MEM_IMAGE";
      row.image = image.path;
      out.rows.push_back(std::move(row));
      covered.Add(s, e);
    }
    own.Add(r->start, r->end);
  }
  if (own.empty()) ++out.images_without_mapping;
  for (auto [s, e] : own.Gaps(image.start, image.end)) out.image_bytes_clipped += e - s;
}

// The part [start, end) of `range` that no earlier row holds.
void AddPiece(const OsView& os, bool live, const ClrRange& range, uint64_t start, uint64_t end, RuntimeTable& out) {
  RangeSet mapped;
  for (const Region* r : os.Overlapping(start, end)) {
    const uint64_t s = std::max(r->start, start), e = std::min(r->end, end);
    RuntimeRow row = os.Row(*r, s, e);
    row.kind = range.kind;
    row.detail = range.detail;
    out.rows.push_back(std::move(row));
    mapped.Add(s, e);
  }
  for (auto [s, e] : mapped.Gaps(start, end)) {
    if (live) {
      out.unmapped_bytes += e - s;
      continue;
    }
    RuntimeRow row;
    row.start = s;
    row.end = e;
    row.kind = range.kind;
    row.detail = range.detail;
    row.type = "MEM_PRIVATE";
    row.state = "MEM_RESERVE";
    out.rows.push_back(std::move(row));
    out.not_in_core_bytes += e - s;
  }
}

}  // namespace

RuntimeTable RuntimeTableBuilder::Build(const ClrHelperOutput& clr, const RegionTable& os_table) {
  const OsView os(os_table);
  RuntimeTable out;
  RangeSet covered;
  for (const ClrImage& image : clr.images) AddImage(os, image, covered, out);
  std::vector<const ClrRange*> ranges;
  for (const ClrRange& r : clr.ranges) ranges.push_back(&r);
  std::stable_sort(ranges.begin(), ranges.end(), [](const ClrRange* a, const ClrRange* b) {
    return a->end - a->start < b->end - b->start;
  });
  for (const ClrRange* r : ranges) {
    for (auto [s, e] : covered.Gaps(r->start, r->end)) AddPiece(os, clr.live, *r, s, e, out);
    covered.Add(r->start, r->end);
  }
  std::sort(out.rows.begin(), out.rows.end(),
            [](const RuntimeRow& a, const RuntimeRow& b) { return a.start < b.start; });
  return out;
}

}  // namespace pageblame::regions
