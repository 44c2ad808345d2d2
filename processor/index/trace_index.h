// The address-timeline index of one trace: every process's address space at
// any time, and every change with its time and creating stack.
//
// Filled by replay/ (append-only), then Finalize() builds the lookup
// structures and the index is read-only.
//
//   const TraceIndex& idx = loaded.index();
//   for (uint32_t p : idx.ProcessesWithPid(6640)) {
//     VersionId v = idx.Lookup(p, 0x7f3bad120000, kEndOfTrace);   // O(log n)
//     if (v.valid()) { const Version& ver = idx.version(v); ... ver.origin ... }
//   }
//   std::vector<VersionId> all = idx.RegionsAt(p, t);      // O(versions of p)
//   std::vector<VersionId> hist = idx.History(p, addr);    // O(log n + k log n)
#ifndef PAGEBLAME_INDEX_TRACE_INDEX_H_
#define PAGEBLAME_INDEX_TRACE_INDEX_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "processor/base/block_pool.h"
#include "processor/base/chunked_vector.h"
#include "processor/index/call_record.h"
#include "processor/index/index_thinning.h"
#include "processor/index/interval_index.h"
#include "processor/index/stack_table.h"
#include "processor/index/string_table.h"
#include "processor/index/timeline_types.h"
#include "processor/index/trace_stats.h"

namespace pageblame::index {

class IndexCodecAccess;

class TraceIndex {
 public:
  TraceIndex() = default;
  TraceIndex(const TraceIndex&) = delete;
  TraceIndex& operator=(const TraceIndex&) = delete;

  // --- building (replay/) ---
  StackTable& stacks() { return stacks_; }
  StringTable& strings() { return strings_; }
  TraceStats& mutable_stats() { return stats_; }
  EventId AddEvent(const CallEvent& e);
  // Replaces call `id` (a call's span widened by a late duplicate sample, its
  // stack renumbered).
  void SetEvent(EventId id, const CallEvent& e);
  VersionId AddVersion(const Version& v);
  // Room for `calls` more calls and `versions` more versions, made now (see
  // ChunkedVector::Reserve).
  void Reserve(size_t calls, size_t versions) {
    events_.Reserve(calls);
    versions_.Reserve(versions);
  }
  // The one building call that is safe from another thread while replay
  // runs (a reading thread calls it when it would wait anyway): makes the
  // blocks for up to `calls` calls and as many versions in all, at most
  // kMaxReadyBlocks ahead per table, for the replay thread to take ready.
  // A call is made of an enter, so the count of enters read bounds the
  // calls; the cap bounds the memory made for nothing when many enters
  // change nothing, or a trace has fewer versions than calls.
  // `calls` counts every call read, those thinned away (ThinBefore)
  // included: they are taken off, so blocks are made for the calls kept.
  static constexpr size_t kMaxReadyBlocks = 4;
  void PrepareBlocks(size_t calls) {
    const size_t events = calls - std::min(calls, thinned_events_.load(std::memory_order_relaxed));
    const size_t versions = calls - std::min(calls, thinned_versions_.load(std::memory_order_relaxed));
    event_blocks_.Prepare(BlocksFor<CallRecord>(events), kMaxReadyBlocks);
    version_blocks_.Prepare(BlocksFor<Version>(versions), kMaxReadyBlocks);
  }
  Version& mutable_version(VersionId id) { return versions_[id.value()]; }
  uint32_t AddProcess(const Process& p);
  Process& mutable_process(uint32_t i) { return processes_[i]; }
  // Thins the index in place at `cutoff` (index_thinning.h): the calls and
  // versions thinning leaves out are dropped, the rest renumbered in order
  // and every id the index holds rewritten; stats() count what went. While
  // building only (the recorder's folding, paused between events). Returns
  // the renumbering, for the ids the caller holds (replay's threads).
  IndexThinning ThinBefore(uint64_t cutoff);
  // Ends building. Call once, after replay. The per-process interval indexes
  // that answer questions about past times are built on the first such
  // question (thread-safe), so `maps`/`query` of the end state never pay for
  // them.
  void Finalize() { finalized_ = true; }

  // --- reading ---
  const StackTable& stacks() const { return stacks_; }
  const StringTable& strings() const { return strings_; }
  const TraceStats& stats() const { return stats_; }
  // A copy: calls are kept packed (call_record.h). A reference to it lives
  // as long as the expression, or the `const CallEvent&` it initializes.
  CallEvent event(EventId id) const {
    const CallRecord& r = events_[id.value()];
    return r.packed() ? r.Unpack() : unpacked_.at(id.value());
  }
  const Version& version(VersionId id) const { return versions_[id.value()]; }
  const Process& process(uint32_t i) const { return processes_[i]; }
  size_t num_events() const { return events_.size(); }
  size_t num_versions() const { return versions_.size(); }
  size_t num_processes() const { return processes_.size(); }
  // What the index holds in memory (calls, versions, stacks, live maps and,
  // once built, the interval indexes), for -v and the benchmark's check that
  // everything else stays small. Live maps are estimated (btree nodes). Not
  // while another thread may be asking the first past-time question (that
  // builds the interval indexes this counts).
  size_t MemoryBytes() const;
  // What record --max-memory bounds (recorder/chunk_folder.h): the index's
  // memory that grows with the recording, as its tables hold it: the calls
  // and versions (count x size), the madvise calls, the stack table
  // (frames, ids, hash set), the string table, the processes and their
  // live maps. Not the blocks made ahead for the replay (PrepareBlocks: a
  // fixed few), nor the interval indexes (built after the replay only).
  // While building, from the thread that builds (or with it paused).
  uint64_t BoundedBytes() const;
  // The part of BoundedBytes no thinning makes smaller (ThinBefore): the
  // strings (thinned in the index file only), the processes and their live maps.
  uint64_t UnthinnedBytes() const;
  // What call `id` takes in memory: its record, and its whole copy if it
  // does not pack.
  size_t EventBytes(EventId id) const {
    return sizeof(CallRecord) + (events_[id.value()].packed() ? 0 : sizeof(CallEvent));
  }
  // The calls and versions as the tables hold them (count x size): what
  // grows with every call replayed.
  uint64_t CallAndVersionBytes() const {
    return events_.size() * sizeof(CallRecord) + unpacked_.size() * sizeof(CallEvent) +
           versions_.size() * sizeof(Version);
  }

  // Process entries (generations) with this pid, oldest first.
  std::vector<uint32_t> ProcessesWithPid(uint32_t pid) const;
  // Every pid in the trace, ascending, each once.
  std::vector<uint32_t> Pids() const;
  // The version of process `p` containing `addr` at time `t` (kEndOfTrace = end).
  VersionId Lookup(uint32_t p, uint64_t addr, uint64_t t) const;
  // Versions of `p` alive at `t`, sorted by start.
  std::vector<VersionId> RegionsAt(uint32_t p, uint64_t t) const;
  // Every version of `p` that ever contained `addr`, oldest first.
  std::vector<VersionId> History(uint32_t p, uint64_t addr) const;

 private:
  friend class IndexCodecAccess;  // index_codec.h: reads and writes the tables whole
  // A process's live map, estimated (btree nodes).
  static size_t LiveBytes(const Process& p);
  template <typename T>
  static size_t BlocksFor(size_t n) {
    return (n + ChunkedVector<T>::kBlock - 1) / ChunkedVector<T>::kBlock;
  }
  StackTable stacks_;
  StringTable strings_;
  TraceStats stats_;
  // Chunked: appends never move the tables (no copy at growth, no 2x peak).
  // The pools come first: the tables own the blocks they took from them.
  BlockPool event_blocks_{ChunkedVector<CallRecord>::kBlockBytes};
  BlockPool version_blocks_{ChunkedVector<Version>::kBlockBytes};
  ChunkedVector<CallRecord> events_{&event_blocks_};
  // The calls that do not pack (CallRecord::Pack: a call of over ~4 s, a
  // 4 GiB length, ...), whole, by id: rare, so a hash map.
  absl::flat_hash_map<uint32_t, CallEvent> unpacked_;
  ChunkedVector<Version> versions_{&version_blocks_};
  std::vector<Process> processes_;
  // What ThinBefore dropped in all (PrepareBlocks reads them on another thread).
  std::atomic<size_t> thinned_events_{0}, thinned_versions_{0};
  // The interval indexes, built by BuildIntervals() on first use.
  const std::vector<IntervalIndex>& intervals() const;
  void BuildIntervals() const;
  bool finalized_ = false;
  mutable std::once_flag intervals_once_;
  mutable std::vector<IntervalIndex> by_process_;
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> pid_to_processes_;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_TRACE_INDEX_H_
