#include "processor/residency/residency_index.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/residency/snapshot_file.h"

namespace pageblame::residency {
namespace {

std::string Seconds(uint64_t ns) { return absl::StrFormat("%.6f", ns / 1e9); }

absl::Status OtherTrace(const std::string& path, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": residency snapshots of another trace: ", why,
                   " (remove or rename the file to answer without resident bytes)"));
}

}  // namespace

std::string TraceFacts::Outside(uint64_t time) const {
  const uint64_t lo = first_time > ResidencyIndex::kSlack ? first_time - ResidencyIndex::kSlack : 0;
  if (time < lo) return absl::StrCat("before the trace began (", Seconds(first_time), " s)");
  if (end_time != 0 && time > end_time + kEndSlack) {
    return absl::StrCat("after the trace ended (", Seconds(end_time), " s)");
  }
  return "";
}

absl::StatusOr<ResidencyIndex> ResidencyIndex::Load(const std::string& path, const TraceFacts& trace) {
  absl::StatusOr<std::unique_ptr<InputFile>> f = InputFile::Open(path, kSnapshotFileWhat, InputFile::Accept::kRegular);
  if (!f.ok()) return f.status();
  return Load(**f, trace);
}

absl::StatusOr<ResidencyIndex> ResidencyIndex::Load(const InputFile& file, const TraceFacts& trace) {
  absl::StatusOr<std::string> bytes = file.ReadAll();
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<SnapshotFile> f = ParseSnapshotFile(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), file.path());
  if (!f.ok()) return f.status();
  return Build(file.path(), f->clockid, std::move(f->snapshots), trace);
}

absl::StatusOr<ResidencyIndex> ResidencyIndex::Build(std::string path, int32_t clockid,
                                                    std::vector<ResidencySnapshot> snapshots,
                                                    const TraceFacts& trace) {
  if (!trace.clockid) {
    return OtherTrace(path, absl::StrCat("the trace was recorded on perf's own clock, the snapshots on clock ",
                                         clockid, " (record with pageblame record, which passes --clockid)"));
  }
  if (*trace.clockid != clockid) {
    return OtherTrace(path, absl::StrCat("the trace's clock is ", *trace.clockid, ", the snapshots' ", clockid));
  }
  ResidencyIndex r;
  r.path_ = std::move(path);
  std::vector<uint32_t> strangers;
  for (ResidencySnapshot& s : snapshots) {
    if (std::find(trace.pids.begin(), trace.pids.end(), s.pid) == trace.pids.end()) {
      // A process the recorder followed that made no memory call: kept (its
      // rss is still the process's), unless no snapshot names a traced pid.
      strangers.push_back(s.pid);
    }
    if (const std::string outside = trace.Outside(s.time); !outside.empty()) {
      return OtherTrace(r.path_,
                        absl::StrCat("a snapshot of pid ", s.pid, " at ", Seconds(s.time), " s was taken ", outside));
    }
    r.last_time_ = std::max(r.last_time_, s.time);
    r.by_pid_[s.pid].push_back(std::move(s));
    ++r.count_;
  }
  if (r.count_ > 0 && strangers.size() == r.count_) {
    std::sort(strangers.begin(), strangers.end());
    strangers.erase(std::unique(strangers.begin(), strangers.end()), strangers.end());
    return OtherTrace(r.path_, absl::StrCat("its pids (", absl::StrJoin(strangers, ", "),
                                            ") are not in the trace (", absl::StrJoin(trace.pids, ", "), ")"));
  }
  for (auto& [pid, v] : r.by_pid_) {
    std::stable_sort(v.begin(), v.end(),
                     [](const ResidencySnapshot& a, const ResidencySnapshot& b) { return a.time < b.time; });
  }
  return r;
}

const ResidencySnapshot* ResidencyIndex::At(uint32_t pid, uint64_t time) const {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return nullptr;
  const std::vector<ResidencySnapshot>& v = it->second;
  auto after = std::upper_bound(v.begin(), v.end(), time,
                                [](uint64_t t, const ResidencySnapshot& s) { return t < s.time; });
  return after == v.begin() ? nullptr : &*(after - 1);
}

const std::vector<ResidencySnapshot>& ResidencyIndex::Of(uint32_t pid) const {
  static const std::vector<ResidencySnapshot> kNone;
  auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? kNone : it->second;
}

}  // namespace pageblame::residency
