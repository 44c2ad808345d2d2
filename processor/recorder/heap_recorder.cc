#include "processor/recorder/heap_recorder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "processor/heap/heap_snapshot_file.h"
#include "processor/heap/heap_walker.h"
#include "processor/heap/live_memory.h"
#include "processor/residency/pagemap_sampler.h"

namespace pageblame::recorder {
namespace {

// Walks take at most 1 / (1 + kSpacing) of the snapshot thread's time.
constexpr int kSpacing = 3;

}  // namespace

bool HeapRecorder::Due(uint32_t pid, residency::SnapshotReason reason) {
  if (skip_ && skip_(pid)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  const PerProcess& p = processes_[pid];
  if (p.foreign || failed_) return false;
  if (reason != residency::SnapshotReason::kPeriodic || Clock::now() >= p.next_due) return true;
  ++summary_.skipped;
  return false;
}

void HeapRecorder::Walk(uint32_t pid, residency::SnapshotReason reason, const residency::ResidencySnapshot* rss) {
  if (!Due(pid, reason)) return;
  std::lock_guard<std::mutex> walking(walk_mu_);
  const Clock::time_point start = Clock::now();
  const uint64_t stamp = residency::PagemapSampler(clockid_).Now();
  absl::StatusOr<std::unique_ptr<heap::LiveMemory>> memory = heap::LiveMemory::Open(pid);
  if (!memory.ok()) {
    // Gone meanwhile: nothing to say (its residency snapshot was skipped too).
    if (!absl::IsNotFound(memory.status())) Note(pid, std::string(memory.status().message()), false);
    return;
  }
  heap::HeapWalkOptions options;
  options.residency = rss;
  options.read_pagemap = rss == nullptr;
  options.libc_cache = &libc_;
  absl::StatusOr<heap::HeapSnapshot> s = heap::HeapWalker::Walk(memory->get(), options);
  const Clock::time_point end = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    processes_[pid].next_due = end + kSpacing * (end - start);
  }
  if (!s.ok()) {
    Note(pid, absl::StrCat("its heap was not walked: ", s.status().message()), false);
    return;
  }
  if (s->allocator != heap::Allocator::kGlibc) {
    Note(pid, absl::StrCat("its malloc is ", heap::AllocatorName(s->allocator), ", not glibc's: no heap snapshots",
                           s->note.empty() ? "" : absl::StrCat(" (", s->note, ")")),
         s->allocator != heap::Allocator::kUnknown);
    return;
  }
  s->time = stamp;
  Write(heap::EncodeHeapSnapshot(*s),
        {.pid = pid, .time = stamp, .pinned = reason != residency::SnapshotReason::kPeriodic},
        std::chrono::duration<double>(end - start).count());
}

void HeapRecorder::Note(uint32_t pid, const std::string& text, bool foreign) {
  std::lock_guard<std::mutex> lock(mu_);
  PerProcess& p = processes_[pid];
  p.foreign = p.foreign || foreign;
  if (p.noted) return;
  p.noted = true;
  summary_.notes.push_back(absl::StrCat("pid ", pid, ": ", text));
}

bool HeapRecorder::Write(const std::string& record, const SnapshotRecordInfo& info, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return false;
  if (!writer_) {
    absl::StatusOr<int> fd = files_->CreateHeapSnapshotFile();
    absl::StatusOr<std::unique_ptr<SnapshotWriter>> w =
        fd.ok() ? SnapshotWriter::CreateWithHeader(*fd, heap::HeapSnapshotPathFor(files_->trace()),
                                                   heap::EncodeHeapFileHeader(clockid_))
                : absl::StatusOr<std::unique_ptr<SnapshotWriter>>(fd.status());
    if (!w.ok()) {
      failed_ = true;
      summary_.error = std::string(w.status().message());
      return false;
    }
    writer_ = std::move(*w);
    summary_.path = writer_->path();
    if (thin_budget_ > 0) writer_->ThinWithin({files_->dir_fd(), files_->HeapSnapshotFileName(), thin_budget_});
  }
  if (absl::Status st = writer_->AppendRecord(record, info); !st.ok()) {
    failed_ = true;
    summary_.error = std::string(st.message());
    return false;
  }
  ++summary_.snapshots;
  summary_.bytes += record.size();
  summary_.walk_seconds_total += seconds;
  summary_.walk_seconds_max = std::max(summary_.walk_seconds_max, seconds);
  return true;
}

HeapRecordSummary HeapRecorder::Summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  HeapRecordSummary out = summary_;
  if (writer_) out.thinned = writer_->Thinned();
  return out;
}

}  // namespace pageblame::recorder
