// RegionList: the rows of a region table, stored compactly — 32 bytes a row
// (bounds, rss, line and the id of its text), and each distinct text (type,
// state, protect, usage, merged lines) once — so that a table of ten
// million rows (a pmap of a process with that many mappings, or a fuzzer's)
// costs hundreds of MB, not the ~200 bytes a Region object takes plus its
// strings. `pageblame diff` keeps two tables and their diff lists in them.
//
//   RegionList rows;
//   rows.push_back(region);           // its text is interned
//   Region r = rows[0];               // a copy, strings and all
//   for (Region r : rows) ...         // the same, row by row
//   rows.start(i), rows.end(i), rows.rss(i), rows.text(i).usage   // no copy
//
// Access returns a Region by VALUE, made on the spot: a reference or
// pointer to it (`for (const Region& r : rows) keep(&r)`) dangles after the
// statement (the loop's iteration). Keep indices instead. Lists copied from
// one another share their texts (ids stay valid in both), so a list of parts
// of another list's rows (AppendPart) costs 32 bytes a part.

// Outside the guard: RegionTable (region.h) holds a RegionList, so region.h
// defines Region and then includes this file; included first, this file
// gets Region (and RegionTable) from region.h that way too.
#include "processor/regions/region.h"

#ifndef PAGEBLAME_REGIONS_REGION_LIST_H_
#define PAGEBLAME_REGIONS_REGION_LIST_H_

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "processor/base/index_iterator.h"

namespace pageblame::regions {

// What a row says besides its bounds, line and rss: what many rows share.
struct RegionText {
  std::string type, state, protect, usage;
  std::vector<int> merged_lines;

  bool operator==(const RegionText& o) const {
    return type == o.type && state == o.state && protect == o.protect && usage == o.usage &&
           merged_lines == o.merged_lines;
  }
  template <typename H>
  friend H AbslHashValue(H h, const RegionText& t) {
    return H::combine(std::move(h), t.type, t.state, t.protect, t.usage, t.merged_lines);
  }
};

class RegionList {
 public:
  // One row as stored. rss kNoRss: unknown.
  struct Row {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t rss = 0;
    int32_t line = 0;
    uint32_t text = 0;
  };
  static constexpr uint64_t kNoRss = ~uint64_t{0};

  using const_iterator = IndexIterator<RegionList, Region>;
  using value_type = Region;

  RegionList();
  // An empty list sharing `other`'s texts, for parts of its rows.
  static RegionList SharingTextsOf(const RegionList& other);

  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  void reserve(size_t n) { rows_.reserve(n); }
  void clear() { rows_.clear(); }
  // Frees the slack of a list that grew by doubling.
  void shrink_to_fit() { rows_.shrink_to_fit(); }

  Region operator[](size_t i) const;
  Region front() const { return (*this)[0]; }
  Region back() const { return (*this)[rows_.size() - 1]; }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, rows_.size()); }
  std::vector<Region> ToVector() const;

  void push_back(const Region& r);
  // Appends [start, end) of row `i` of `from` (which shares this list's
  // texts, else its text is interned here), with rss `rss`.
  void AppendPart(const RegionList& from, size_t i, uint64_t start, uint64_t end, std::optional<uint64_t> rss);

  const Row& row(size_t i) const { return rows_[i]; }
  uint64_t start(size_t i) const { return rows_[i].start; }
  uint64_t end(size_t i) const { return rows_[i].end; }
  int line(size_t i) const { return rows_[i].line; }
  std::optional<uint64_t> rss(size_t i) const {
    return rows_[i].rss == kNoRss ? std::nullopt : std::optional<uint64_t>(rows_[i].rss);
  }
  void set_rss(size_t i, std::optional<uint64_t> rss) { rows_[i].rss = rss.value_or(kNoRss); }
  const RegionText& text(size_t i) const { return *texts_->by_id[rows_[i].text]; }

  // Orders the rows by `less(const Row&, const Row&)`; StableSort keeps
  // equal rows in their order (and takes a buffer of half the rows).
  template <typename Less>
  void Sort(Less less) {
    std::sort(rows_.begin(), rows_.end(), less);
  }
  template <typename Less>
  void StableSort(Less less) {
    std::stable_sort(rows_.begin(), rows_.end(), less);
  }

 private:
  struct Texts {
    absl::node_hash_map<RegionText, uint32_t> ids;
    std::vector<const RegionText*> by_id;  // keys of `ids`, whose nodes stay put
  };
  uint32_t Intern(RegionText text);

  std::shared_ptr<Texts> texts_;
  std::vector<Row> rows_;
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_REGION_LIST_H_
