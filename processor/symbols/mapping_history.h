// The trace's one mapping history: the code mappings of every process over
// time, from the MMAP/MMAP2 records, with fork and exec, and the build ids
// of the HEADER_BUILD_ID feature. Enough to say which mapping held an ip of
// a given process at a given time, and which build id names its file. The
// symbolizer, the unwinder (unwind/module_map.h) and the preload plan all
// read this one object; the loader fills it (replay/load_pass.cc).
//
//   MappingHistory maps;
//   maps.AddBuildId("/usr/lib/libc.so.6", id);      // from the header, first
//   maps.AddMapping(100, t0, 0x7f0000000000, 0x1000, 0, "/usr/lib/libc.so.6", "");
//   maps.OnFork(/*child=*/200, /*parent=*/100, t1);   // 200 sees libc too
//   maps.OnExec(200, t2);                             // ... but not after t2
//   const MappingHistory::Mapping* m = maps.Find(200, t1 + 1, 0x7f0000000010);
//   maps.BuildIdOf(m->path, m->build_id);             // the record's, else the header's
//
// Threads: one thread fills it (the loader's, in file order) and may read
// it meanwhile (the unwinder); others read it once that thread is done
// (printing). The header's build ids are added before any other thread
// starts, so BuildIdOf is safe from any thread from then on.
//
// Rules, as perf's machine/thread/maps code applies them
// (tools/perf/util/machine.c, thread.c, maps.c):
// - A mapping applies from its record's time on; a later mapping overlapping
//   it takes over the overlapped part (maps__fixup_overlappings()). There is
//   no munmap record, so a mapping otherwise stays until exec.
// - fork: the child starts with the parent's mappings as of the fork
//   (thread__fork() copies them); `child == parent` (a new thread) is ignored.
// - exec (COMM with the exec flag): the process starts over with no mappings.
// Lookups are by time, so earlier and later states can both be asked about.
// If nothing covered the ip at that time, a mapping of the same exec epoch
// that appeared later is used (records that reach us slightly out of order).
//
// Records may be added in any order, with the answers of time order: the
// unwinder is fed in file order, and perf writes each CPU's buffer in turn,
// so a whole CPU's part of a round (the .NET runtime's MMAP2 records of its
// code and JIT) can come before the other CPU's COMM exec that precedes them
// in time. A mapping belongs to the epoch in effect at its own time, also
// when that epoch's fork or exec is read later; a mapping older than one
// already added to its epoch rebuilds that epoch's pieces in time order.
//
// Find() is O(log n) in the live mappings of the process, plus a scan of the
// mappings that were replaced since `time`, per fork generation. AddMapping()
// is O(log n) in time order, O(n log n) in the epoch's n mappings otherwise.
#ifndef PAGEBLAME_SYMBOLS_MAPPING_HISTORY_H_
#define PAGEBLAME_SYMBOLS_MAPPING_HISTORY_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_set.h"

namespace pageblame::symbols {

class MappingHistory {
 public:
  struct Mapping {
    uint64_t start = 0;
    uint64_t end = 0;    // exclusive
    uint64_t pgoff = 0;  // file offset of `start`, in bytes
    uint64_t time = 0;   // when the mapping appeared
    std::string_view path;      // as recorded; interned, lives as long as this
    std::string_view build_id;  // raw; "" if the record had none

    // The file offset an ip inside this mapping reads from.
    uint64_t FileOffset(uint64_t ip) const { return ip - start + pgoff; }
  };

  // A build id from the HEADER_BUILD_ID feature for a file path, used when
  // a mapping's record has none. Before the first AddMapping.
  void AddBuildId(std::string_view path, std::string_view build_id);
  // `build_id`, or if it is empty the header's for `path` ("" if none).
  std::string_view BuildIdOf(std::string_view path, std::string_view build_id) const;

  // An executable mapping: the history is of code, which is all that pcs
  // are looked up in (data mappings, which perf record -d adds by the
  // thousand, would only make each late record's re-laying dearer).
  void AddMapping(uint32_t pid, uint64_t time, uint64_t start, uint64_t len, uint64_t pgoff,
                  std::string_view path, std::string_view build_id);
  void OnFork(uint32_t child, uint32_t parent, uint64_t time);
  void OnExec(uint32_t pid, uint64_t time);

  // The mapping holding `ip` in `pid` at `time`, or nullptr. The pointer stays
  // valid for the life of this object.
  const Mapping* Find(uint32_t pid, uint64_t time, uint64_t ip) const;

  // Everything added, in the order added: applied to a fresh history, the
  // same history (the recording's index keeps them: replay/recording_file.h).
  struct Op {
    enum class Kind : uint8_t { kBuildId, kMapping, kFork, kExec };
    Kind kind = Kind::kMapping;
    uint32_t pid = 0;     // kMapping, kExec; the child for kFork
    uint32_t parent = 0;  // kFork
    uint64_t time = 0, start = 0, len = 0, pgoff = 0;
    std::string_view path, build_id;  // kBuildId, kMapping (interned here)
  };
  const std::vector<Op>& ops() const { return ops_; }
  void Apply(const Op& op);

  // Changes with every op added. Between two changes, Find(pid, t, ip)
  // answers the same for every t at or after latest_time() (every epoch
  // and piece began by then, and none was replaced after it): what the
  // unwinder's step cache (unwind/step_cache.h) relies on.
  uint64_t generation() const { return generation_; }
  // The latest time of any mapping, fork or exec added (0: none).
  uint64_t latest_time() const { return latest_time_; }

  size_t mapping_count() const { return mappings_.size(); }
  // Every mapping added, in the order added (file order for the loader's).
  const std::deque<Mapping>& mappings() const { return mappings_; }

 private:
  static constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();
  // A part of a mapping that was in effect over [added, replaced).
  struct Piece {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t added = 0;
    uint64_t replaced = kForever;
    const Mapping* mapping = nullptr;
  };
  // One exec lifetime of a process (or its life since fork).
  struct Epoch {
    uint64_t begin = 0;  // time of the fork/exec that started it
    std::optional<uint32_t> parent;  // set if started by fork at `begin`
    absl::btree_map<uint64_t, Piece> live;  // disjoint, keyed by start
    std::vector<Piece> replaced;             // parts taken over by later mappings
    // Every mapping of the epoch, in time order (ties: in the order added),
    // to rebuild `live` and `replaced` from when one arrives out of order.
    std::vector<const Mapping*> mappings;

    void Add(const Mapping* mapping);
    // live/replaced again from `mappings`, after they were sorted or moved.
    void Rebuild();
    // `mapping` over the pieces: it must be the latest in time so far.
    void Place(const Mapping* mapping);
    // The piece covering ip at `time`; nullptr if none.
    const Piece* FindAt(uint64_t ip, uint64_t time) const;
    // The earliest piece covering ip that appeared after `time`.
    const Piece* FindAfter(uint64_t ip, uint64_t time) const;
  };

  // The index in `epochs` (sorted by begin, not empty) of the one in effect at `time`.
  static size_t EpochIndex(const std::vector<Epoch>& epochs, uint64_t time);
  // The epoch of `pid` in effect at `time`, nullptr if the pid is unknown.
  const Epoch* EpochAt(uint32_t pid, uint64_t time) const;
  Epoch* MutableEpochAt(uint32_t pid, uint64_t time);
  // Inserts `epoch` by its begin and takes into it the mappings its
  // neighbours hold that are of its time (added before it was known).
  void AddEpoch(uint32_t pid, Epoch epoch);

  // An op was added: its time may be the latest.
  void Changed(uint64_t time) {
    ++generation_;
    latest_time_ = std::max(latest_time_, time);
  }

  uint64_t generation_ = 0;
  uint64_t latest_time_ = 0;
  std::deque<Mapping> mappings_;  // stable addresses
  std::vector<Op> ops_;
  absl::node_hash_set<std::string> strings_;
  absl::flat_hash_map<std::string, std::string> header_build_ids_;  // path -> raw id
  absl::flat_hash_map<uint32_t, std::vector<Epoch>> epochs_;  // sorted by begin
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_MAPPING_HISTORY_H_
