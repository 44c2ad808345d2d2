#include "processor/residency/snapshot_file.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "processor/base/byte_reader.h"
#include "processor/base/byte_writer.h"
#include "processor/base/input_file.h"

namespace pageblame::residency {
namespace {

enum PageState : uint64_t { kAbsent = 0, kPresent = 1, kSwapped = 2 };
constexpr uint32_t kFlagRollup = 1;

// The runs of one read range, from the present and swapped tallies.
void PutRuns(const ResidencySnapshot& s, const PageRange& range, uint64_t page, std::string* out) {
  std::string runs;
  uint64_t count = 0;
  auto emit = [&](uint64_t bytes, PageState state) {
    if (bytes == 0) return;
    PutVarint(&runs, (bytes / page) << 2 | state);
    ++count;
  };
  // Walk the range, alternating between state changes found in both tallies.
  uint64_t at = range.start;
  const auto& present = s.present.ranges();
  const auto& swapped = s.swapped.ranges();
  size_t p = std::lower_bound(present.begin(), present.end(), at,
                              [](const PageRange& r, uint64_t a) { return r.end <= a; }) - present.begin();
  size_t w = std::lower_bound(swapped.begin(), swapped.end(), at,
                              [](const PageRange& r, uint64_t a) { return r.end <= a; }) - swapped.begin();
  while (at < range.end) {
    const uint64_t next_p = p < present.size() ? std::max(present[p].start, at) : range.end;
    const uint64_t next_w = w < swapped.size() ? std::max(swapped[w].start, at) : range.end;
    const uint64_t next = std::min({next_p, next_w, range.end});
    emit(next - at, kAbsent);
    at = next;
    if (at == range.end) break;
    if (next_p == at) {
      const uint64_t stop = std::min(present[p].end, range.end);
      emit(stop - at, kPresent);
      at = stop;
      if (present[p].end <= at) ++p;
    } else {
      const uint64_t stop = std::min(swapped[w].end, range.end);
      emit(stop - at, kSwapped);
      at = stop;
      if (swapped[w].end <= at) ++w;
    }
  }
  PutVarint(out, count);
  out->append(runs);
}

absl::Status Bad(absl::string_view name, size_t offset, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(name, ": offset ", offset, ": ", what));
}


struct RecordHeader {
  uint32_t magic, pid;
  uint64_t bytes, time, end_time;
  uint32_t reason, flags;
  uint64_t rss, swap;
  uint32_t ranges, reserved;
};
static_assert(sizeof(RecordHeader) == kRecordHeaderSize);

// The ranges of one record, checked: page counts that fit the address space,
// runs that add up to their range.
absl::Status ParseRanges(ByteReader* r, uint32_t count, uint64_t page, size_t base, absl::string_view name,
                         ResidencySnapshot* s) {
  std::vector<PageRange> read, present, swapped;
  const uint64_t max_pages = (uint64_t{1} << 57) / page;  // above any user address space
  uint64_t at_page = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t gap, len, runs;
    if (!r->ReadVarint(&gap) || !r->ReadVarint(&len) || !r->ReadVarint(&runs)) {
      return Bad(name, base + r->pos(), absl::StrCat("range ", i, " of ", count, ": truncated"));
    }
    if (gap > max_pages - at_page || len == 0 || len > max_pages - at_page - gap) {
      return Bad(name, base + r->pos(), absl::StrCat("range ", i, ": ", gap, " pages on, ", len,
                                                     " pages long: outside the address space"));
    }
    const uint64_t start = (at_page + gap) * page;
    const uint64_t end = start + len * page;
    at_page += gap + len;
    if (runs > len) return Bad(name, base + r->pos(), absl::StrCat("range ", i, ": ", runs, " runs for ", len, " pages"));
    uint64_t run_at = start;
    for (uint64_t k = 0; k < runs; ++k) {
      uint64_t v;
      if (!r->ReadVarint(&v)) return Bad(name, base + r->pos(), "run: truncated");
      const uint64_t pages = v >> 2, state = v & 3;
      if (state > kSwapped || pages == 0 || pages > (end - run_at) / page) {
        return Bad(name, base + r->pos(), absl::StrCat("range ", i, ": bad run (", pages, " pages, state ", state, ")"));
      }
      const uint64_t run_end = run_at + pages * page;
      if (state == kPresent) AppendRange(&present, run_at, run_end);
      if (state == kSwapped) AppendRange(&swapped, run_at, run_end);
      run_at = run_end;
    }
    if (run_at != end) {
      return Bad(name, base + r->pos(), absl::StrCat("range ", i, ": runs cover ", (run_at - start) / page,
                                                     " of its ", len, " pages"));
    }
    AppendRange(&read, start, end);
  }
  s->read = RangeTally(std::move(read));
  s->present = RangeTally(std::move(present));
  s->swapped = RangeTally(std::move(swapped));
  return absl::OkStatus();
}

absl::StatusOr<ResidencySnapshot> ParseRecord(ByteReader* file, uint64_t page, absl::string_view name) {
  const size_t base = file->pos();
  RecordHeader h;
  if (!file->Read(&h)) {
    return Bad(name, base, absl::StrCat("truncated: ", file->remaining() + 0, " bytes where a ",
                                        kRecordHeaderSize, "-byte snapshot header was expected"));
  }
  if (h.magic != kRecordMagic) return Bad(name, base, "not a snapshot record (no 'SNAP')");
  if (h.bytes < kRecordHeaderSize) return Bad(name, base, absl::StrCat("record size ", h.bytes, " too small"));
  absl::Span<const uint8_t> body;
  if (!file->ReadSpan(h.bytes - kRecordHeaderSize, &body)) {
    return Bad(name, base, absl::StrCat("truncated: the snapshot record says ", h.bytes, " bytes, ",
                                        file->remaining() + kRecordHeaderSize, " remain"));
  }
  if (h.reason > kMaxSnapshotReason) return Bad(name, base, absl::StrCat("unknown reason ", h.reason));
  if (h.end_time < h.time) return Bad(name, base, "the snapshot ends before it begins");
  if (h.pid == 0) return Bad(name, base, "pid 0");
  ResidencySnapshot s;
  s.pid = h.pid;
  s.time = h.time;
  s.end_time = h.end_time;
  s.reason = static_cast<SnapshotReason>(h.reason);
  if (h.flags & kFlagRollup) {
    s.rollup_rss = h.rss;
    s.rollup_swap = h.swap;
  }
  ByteReader r(body);
  if (absl::Status st = ParseRanges(&r, h.ranges, page, base + kRecordHeaderSize, name, &s); !st.ok()) return st;
  if (!r.empty()) return Bad(name, base + kRecordHeaderSize + r.pos(), "bytes after the last range");
  return s;
}

}  // namespace

std::string SnapshotPathFor(absl::string_view trace_path) { return absl::StrCat(trace_path, ".rss"); }

std::string EncodeHeader(int32_t clockid, uint64_t page_size) {
  std::string out(kSnapshotMagic, sizeof(kSnapshotMagic));
  PutFixed(&out, kSnapshotVersion);
  PutFixed(&out, clockid);
  PutFixed(&out, page_size);
  PutFixed(&out, uint64_t{0});
  return out;
}

std::string EncodeSnapshot(const ResidencySnapshot& s, uint64_t page_size) {
  std::string body;
  uint64_t at = 0;
  for (const PageRange& range : s.read.ranges()) {
    PutVarint(&body, (range.start - at) / page_size);
    PutVarint(&body, range.size() / page_size);
    PutRuns(s, range, page_size, &body);
    at = range.end;
  }
  RecordHeader h = {};
  h.magic = kRecordMagic;
  h.pid = s.pid;
  h.bytes = kRecordHeaderSize + body.size();
  h.time = s.time;
  h.end_time = s.end_time;
  h.reason = static_cast<uint32_t>(s.reason);
  h.flags = s.rollup_rss ? kFlagRollup : 0;
  h.rss = s.rollup_rss.value_or(0);
  h.swap = s.rollup_swap.value_or(0);
  h.ranges = static_cast<uint32_t>(s.read.ranges().size());
  std::string out(reinterpret_cast<const char*>(&h), sizeof(h));
  return out + body;
}

absl::StatusOr<SnapshotFile> ParseSnapshotFile(absl::Span<const uint8_t> bytes, absl::string_view name) {
  ByteReader r(bytes);
  char magic[8];
  SnapshotFile f;
  uint32_t version;
  uint64_t reserved;
  if (!r.Read(&magic) || std::memcmp(magic, kSnapshotMagic, sizeof(magic)) != 0) {
    return Bad(name, 0, "not a pageblame residency snapshot file (no 'PBRESID1')");
  }
  if (!r.Read(&version) || !r.Read(&f.clockid) || !r.Read(&f.page_size) || !r.Read(&reserved)) {
    return Bad(name, r.pos(), "truncated file header");
  }
  if (version != kSnapshotVersion) return Bad(name, 8, absl::StrCat("version ", version, ", expected 1"));
  if (f.page_size < 4096 || f.page_size > (1 << 20) || (f.page_size & (f.page_size - 1)) != 0) {
    return Bad(name, 16, absl::StrCat("page size ", f.page_size));
  }
  while (!r.empty()) {
    auto s = ParseRecord(&r, f.page_size, name);
    if (!s.ok()) return s.status();
    f.snapshots.push_back(*std::move(s));
  }
  return f;
}

absl::StatusOr<SnapshotFile> ReadSnapshotFile(const std::string& path) {
  auto bytes = InputFile::ReadWhole(path, kSnapshotFileWhat, InputFile::Accept::kRegular);
  if (!bytes.ok()) return bytes.status();
  return ParseSnapshotFile(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), path);
}

}  // namespace pageblame::residency
