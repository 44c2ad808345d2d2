#include "processor/recorder/snapshot_thinning.h"

#include <utility>

#include "absl/container/flat_hash_map.h"

namespace pageblame::recorder {
namespace {

constexpr uint64_t kMinute = 60 * SnapshotThinning::kSecond;
constexpr uint64_t kHour = 60 * kMinute;

// Per process while choosing: its last record and the bucket of the last
// record kept for its bucket (width, number), so the earliest of a bucket is
// the one kept.
struct PerProcess {
  size_t last = 0;
  bool seen = false;
  std::pair<uint64_t, uint64_t> bucket{0, 0};
  bool has_bucket = false;
};

}  // namespace

uint64_t SnapshotThinning::Width(uint64_t age, int level) {
  if (level > kMaxLevel) return kOnlyAlwaysKept;
  uint64_t base = 0;
  if (age >= 24 * kHour) {
    base = 2 * kHour;
  } else if (age >= 6 * kHour) {
    base = 30 * kMinute;
  } else if (age >= kKeepAll) {
    base = 5 * kMinute;
  }
  if (level == 0) return base;
  // The last hour, once it does not fit whole: from one per 10 ms up, so
  // snapshots taken often lose only as many as they must.
  if (base == 0) return (kSecond / 100) << (level - 1);
  return base << level;
}

SnapshotThinning::Plan SnapshotThinning::AtLevel(absl::Span<const SnapshotRecordInfo> records, uint64_t now,
                                                 int level) {
  absl::flat_hash_map<uint32_t, PerProcess> procs;
  for (size_t i = 0; i < records.size(); ++i) procs[records[i].pid].last = i;
  Plan plan;
  plan.level = level;
  plan.keep.assign(records.size(), true);
  for (size_t i = 0; i < records.size(); ++i) {
    const SnapshotRecordInfo& r = records[i];
    PerProcess& p = procs[r.pid];
    const bool first = !p.seen;
    p.seen = true;
    const uint64_t width = Width(now > r.time ? now - r.time : 0, level);
    bool keep = first || i == p.last || r.pinned || width == 0;
    if (width != 0 && width != kOnlyAlwaysKept && !r.pinned) {
      const std::pair<uint64_t, uint64_t> bucket{width, r.time / width};
      if (!p.has_bucket || bucket != p.bucket) keep = true;
      p.bucket = bucket;
      p.has_bucket = true;
    }
    plan.keep[i] = keep;
    if (keep) {
      plan.kept_bytes += r.bytes;
    } else {
      plan.dropped_bytes += r.bytes;
      ++plan.dropped;
    }
  }
  return plan;
}

SnapshotThinning::Plan SnapshotThinning::Choose(absl::Span<const SnapshotRecordInfo> records, uint64_t now,
                                                uint64_t budget) {
  Plan plan = AtLevel(records, now, 0);
  const uint64_t floor = AlwaysKeptBytes(records);
  for (int level = 1; budget != 0 && plan.kept_bytes > budget && plan.kept_bytes > floor && level <= kMaxLevel + 1;
       ++level) {
    plan = AtLevel(records, now, level);
  }
  return plan;
}

uint64_t SnapshotThinning::AlwaysKeptBytes(absl::Span<const SnapshotRecordInfo> records) {
  absl::flat_hash_map<uint32_t, std::pair<size_t, size_t>> ends;  // first, last
  for (size_t i = 0; i < records.size(); ++i) {
    auto [it, added] = ends.try_emplace(records[i].pid, i, i);
    if (!added) it->second.second = i;
  }
  uint64_t bytes = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& [first, last] = ends[records[i].pid];
    if (records[i].pinned || i == first || i == last) bytes += records[i].bytes;
  }
  return bytes;
}

}  // namespace pageblame::recorder
