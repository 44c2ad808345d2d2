#include "processor/regions/page_diff.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <utility>

namespace pageblame::regions {
namespace {

using Range = std::pair<uint64_t, uint64_t>;  // [first, second)

// What a table claims, as sorted disjoint ranges (coalesced: no two touch).
std::vector<Range> Claimed(const RegionTable& table) {
  std::vector<Range> ranges;
  size_t count = 0;
  for (size_t i = 0; i < table.regions.size(); ++i) count += table.IsClaimed(table.regions.text(i));
  ranges.reserve(count);
  for (size_t i = 0; i < table.regions.size(); ++i) {
    if (table.regions.start(i) < table.regions.end(i) && table.IsClaimed(table.regions.text(i)))
      ranges.push_back({table.regions.start(i), table.regions.end(i)});
  }
  std::sort(ranges.begin(), ranges.end());
  size_t out = 0;
  for (const Range& r : ranges) {
    if (out > 0 && r.first <= ranges[out - 1].second) {
      ranges[out - 1].second = std::max(ranges[out - 1].second, r.second);
    } else {
      ranges[out++] = r;
    }
  }
  ranges.resize(out);
  ranges.shrink_to_fit();
  return ranges;
}

// Calls gap(s, e) for each part of [start, end) outside `cover`, in order.
template <typename Gap>
void ForEachGap(const std::vector<Range>& cover, uint64_t start, uint64_t end, Gap gap) {
  auto it = std::upper_bound(cover.begin(), cover.end(), start,
                             [](uint64_t a, const Range& r) { return a < r.second; });
  uint64_t at = start;
  for (; it != cover.end() && it->first < end; ++it) {
    if (it->first > at) gap(at, it->first);
    at = std::max(at, it->second);
  }
  if (at < end) gap(at, end);
}

// Calls visit(i) for each committed row i of `table`, by start then line:
// in the table's own order when it is so already (pmap and maps are),
// else through an index sorted so (4 bytes a row).
template <typename Visit>
void ForEachCommitted(const RegionTable& table, Visit visit) {
  const RegionList& rows = table.regions;
  auto key = [&](size_t i) { return std::make_tuple(rows.start(i), rows.line(i)); };
  bool in_order = true;
  size_t last = SIZE_MAX;
  for (size_t i = 0; i < rows.size() && in_order; ++i) {
    if (!table.IsCommitted(rows.text(i))) continue;
    in_order = last == SIZE_MAX || !(key(i) < key(last));
    last = i;
  }
  if (in_order) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (table.IsCommitted(rows.text(i))) visit(i);
    }
    return;
  }
  std::vector<uint32_t> order;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (table.IsCommitted(rows.text(i))) order.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  for (uint32_t i : order) visit(i);
}

// Bytes descending, then start, then line; the totals.
void SortAndTotal(DiffList* list) {
  RegionList& pieces = list->pieces;
  pieces.Sort([](const RegionList::Row& a, const RegionList::Row& b) {
    return std::make_tuple(b.end - b.start, a.start, a.line) < std::make_tuple(a.end - a.start, b.start, b.line);
  });
  list->bytes = 0;
  int max_line = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    list->bytes += pieces.end(i) - pieces.start(i);
    max_line = std::max(max_line, pieces.line(i));
  }
  // Distinct source lines (one line may hold several rows: SOS eeheap's
  // heaps), a bit a line.
  std::vector<bool> seen(static_cast<size_t>(max_line) + 1);
  list->source_regions = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const size_t line = static_cast<size_t>(std::max(pieces.line(i), 0));
    list->source_regions += !seen[line];
    seen[line] = true;
  }
}

// The committed bytes of `table` outside `cover`, as pieces of its rows.
DiffList Uncovered(const RegionTable& table, const std::vector<Range>& cover) {
  const RegionList& rows = table.regions;
  DiffList out;
  out.pieces = RegionList::SharingTextsOf(rows);
  if (table.has_rss) out.resident.emplace();
  // emit(i, s, e) for each piece [s, e) of row i. Rows come by start, so
  // the committed bytes already counted in an earlier row are, within this
  // row, exactly [start, seen_end).
  auto cut = [&](auto emit) {
    uint64_t seen_end = 0;
    ForEachCommitted(table, [&](size_t i) {
      const uint64_t start = std::max(rows.start(i), seen_end), end = rows.end(i);
      seen_end = std::max(seen_end, end);
      if (start < end) ForEachGap(cover, start, end, [&](uint64_t s, uint64_t e) { emit(i, s, e); });
    });
  };
  // Counted first: the list is made at its size, not grown by doubling.
  size_t count = 0;
  cut([&](size_t, uint64_t, uint64_t) { ++count; });
  out.pieces.reserve(count);
  // Each row with pieces: its rss goes to its piece if that is the whole
  // row, and into the list's resident bytes in any case.
  size_t row = SIZE_MAX, row_first = 0;
  uint64_t row_bytes = 0;
  auto close_row = [&] {
    if (row == SIZE_MAX) return;
    const std::optional<uint64_t> rss = rows.rss(row);
    const uint64_t size = rows.end(row) - rows.start(row);
    if (row_bytes == size && out.pieces.size() == row_first + 1) out.pieces.set_rss(row_first, rss);
    if (out.resident && rss) out.resident->Add(size, *rss, row_bytes);
  };
  cut([&](size_t i, uint64_t s, uint64_t e) {
    if (i != row) {
      close_row();
      row = i;
      row_first = out.pieces.size();
      row_bytes = 0;
    }
    out.pieces.AppendPart(rows, i, s, e, std::nullopt);
    row_bytes += e - s;
  });
  close_row();
  SortAndTotal(&out);
  return out;
}

// The seed's rule: committed regions of `table` whose start is not the start
// of any region of `other`.
StartMatch StartMismatch(const RegionTable& table, const RegionTable& other) {
  std::vector<uint64_t> starts;
  starts.reserve(other.regions.size());
  for (size_t i = 0; i < other.regions.size(); ++i) starts.push_back(other.regions.start(i));
  std::sort(starts.begin(), starts.end());
  StartMatch out;
  for (size_t i = 0; i < table.regions.size(); ++i) {
    if (!table.IsCommitted(table.regions.text(i))) continue;
    if (std::binary_search(starts.begin(), starts.end(), table.regions.start(i))) continue;
    ++out.regions;
    out.bytes += table.regions.end(i) - table.regions.start(i);
  }
  return out;
}

}  // namespace

DiffResult Diff(const RegionTable& address_table, const RegionTable& runtime_table) {
  DiffResult d;
  // In this order, a big address table's claimed ranges and starts are
  // gone before its unaccounted pieces are made.
  d.runtime_only = Uncovered(runtime_table, Claimed(address_table));
  d.start_match_runtime_only = StartMismatch(runtime_table, address_table);
  d.unaccounted = Uncovered(address_table, Claimed(runtime_table));
  d.start_match_unaccounted = StartMismatch(address_table, runtime_table);
  return d;
}

}  // namespace pageblame::regions
