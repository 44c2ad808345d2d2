#include "processor/heap/heap_index.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pageblame::heap {
namespace {

absl::Status OtherTrace(const std::string& path, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": heap snapshots of another trace: ", why,
                   " (remove or rename the file to answer without heap snapshots)"));
}

}  // namespace

absl::StatusOr<HeapIndex> HeapIndex::Load(const InputFile& file, const residency::TraceFacts& trace) {
  absl::StatusOr<std::string> bytes = file.ReadAll();
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<HeapSnapshotFile> f = ParseHeapSnapshotFile(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), file.path());
  if (!f.ok()) return f.status();
  return Build(file.path(), *std::move(f), trace);
}

absl::StatusOr<HeapIndex> HeapIndex::Build(std::string path, HeapSnapshotFile file,
                                           const residency::TraceFacts& trace) {
  if (!trace.clockid || *trace.clockid != file.clockid) {
    return OtherTrace(path, absl::StrCat("the snapshots are on clock ", file.clockid, ", the trace ",
                                         trace.clockid ? absl::StrCat("on clock ", *trace.clockid)
                                                       : std::string("on perf's own clock")));
  }
  HeapIndex h;
  h.path_ = std::move(path);
  size_t strangers = 0;
  for (HeapSnapshot& s : file.snapshots) {
    if (!s.time) return OtherTrace(h.path_, absl::StrCat("a snapshot of pid ", s.pid, " has no time (a core's)"));
    if (const std::string outside = trace.Outside(*s.time); !outside.empty()) {
      return OtherTrace(h.path_, absl::StrFormat("a snapshot of pid %u at %.6f s was taken %s", s.pid, *s.time / 1e9,
                                                 outside));
    }
    if (std::find(trace.pids.begin(), trace.pids.end(), s.pid) == trace.pids.end()) ++strangers;
    h.by_pid_[s.pid].push_back(std::move(s));
    ++h.count_;
  }
  if (h.count_ > 0 && strangers == h.count_) {
    return OtherTrace(h.path_, absl::StrCat("its pids (", absl::StrJoin(h.pids(), ", "), ") are not in the trace (",
                                            absl::StrJoin(trace.pids, ", "), ")"));
  }
  for (auto& [pid, v] : h.by_pid_) {
    std::stable_sort(v.begin(), v.end(), [](const HeapSnapshot& a, const HeapSnapshot& b) { return *a.time < *b.time; });
  }
  return h;
}

const HeapSnapshot* HeapIndex::At(uint32_t pid, uint64_t time) const {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return nullptr;
  const std::vector<HeapSnapshot>& v = it->second;
  auto after =
      std::upper_bound(v.begin(), v.end(), time, [](uint64_t t, const HeapSnapshot& s) { return t < *s.time; });
  return after == v.begin() ? nullptr : &*(after - 1);
}

const std::vector<HeapSnapshot>& HeapIndex::Of(uint32_t pid) const {
  static const std::vector<HeapSnapshot> kNone;
  auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? kNone : it->second;
}

std::vector<uint32_t> HeapIndex::pids() const {
  std::vector<uint32_t> out;
  for (const auto& [pid, v] : by_pid_) out.push_back(pid);
  return out;
}

uint64_t HeapIndex::last_time() const {
  uint64_t last = 0;
  for (uint32_t pid : pids()) {
    // Every stored snapshot has a time (Build refuses one without).
    for (const HeapSnapshot& s : Of(pid)) last = std::max(last, s.time.value_or(0));
  }
  return last;
}

}  // namespace pageblame::heap
