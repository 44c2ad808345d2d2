// LiveMemory: the memory of a running process, read without stopping it:
// process_vm_readv(2) (as root, or with ptrace access to the process), else
// pread of /proc/PID/mem. Its mappings come from /proc/PID/maps
// (regions::ProcMapsParser).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<LiveMemory> m, LiveMemory::Open(pid));
//   uint64_t w;
//   bool ok = m->ReadWord(addr, &w);
//
// Reads go through a small direct-mapped cache of 64 KiB blocks (each cut to
// its mapping), so reading words near each other costs one system call per
// block, not per word. ReadBulk (the chunk walk's read of a whole stretch
// of heap) bypasses the cache and reads all the pages asked for in one
// process_vm_readv, one iovec per run of pages (bench/heap.sh: copying
// the bytes, not the calls, is then the cost). The process runs on: a
// read may see a half-made change (the walker re-reads and compares,
// heap_walker.h).
// A read must not change what it measures: reading a page the process never
// touched (or whose contents madvise(MADV_DONTNEED) dropped, as
// malloc_trim does) maps the kernel's zero page there, which pagemap then
// reports present though it is in no one's RSS. So in anonymous mappings
// the pages are first looked up in /proc/PID/pagemap: pages neither
// present nor swapped read as the zeros they are, without touching them.
// (A swapped-out page is read, and so comes back in.)
#ifndef PAGEBLAME_HEAP_LIVE_MEMORY_H_
#define PAGEBLAME_HEAP_LIVE_MEMORY_H_

#include <sys/uio.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class LiveMemory : public TargetMemory {
 public:
  static constexpr size_t kBlock = 64 * 1024;
  static constexpr size_t kSlots = 64;
  // Pagemap entries read per pread (and so pages per process_vm_readv).
  static constexpr size_t kPagemapBatch = 512;

  // NotFound if there is no such process; PermissionDenied if its maps or
  // memory cannot be read.
  static absl::StatusOr<std::unique_ptr<LiveMemory>> Open(uint32_t pid);
  ~LiveMemory() override;

  bool Read(uint64_t addr, void* out, size_t n) override;
  bool ReadBulk(uint64_t addr, void* out, size_t n) override;
  void Forget() override;
  const std::vector<TargetMapping>& mappings() const override { return mappings_; }
  uint32_t pid() const override { return pid_; }
  bool live() const override { return true; }
  std::string HostPath(const std::string& path) const override;
  std::optional<uint64_t> threads() const override;
  bool Refresh() override { return RefreshMappings().ok(); }
  // Re-reads /proc/PID/maps (the process maps and unmaps while it runs).
  absl::Status RefreshMappings();
  // System calls made reading memory so far (bench/).
  uint64_t reads() const { return reads_; }

 private:
  struct Slot {
    uint64_t start = 0, end = 0;  // the bytes held: [start, end); empty if end == start
    std::vector<uint8_t> bytes;
  };
  explicit LiveMemory(uint32_t pid) : pid_(pid), slots_(kSlots) {}
  // Copies [addr, addr + n) from the process, uncached; false if it fails.
  bool ReadRaw(uint64_t addr, void* out, size_t n);
  // The same for bytes of an anonymous mapping, reading only the pages that
  // are present or swapped (zeros for the others).
  bool ReadAnonymous(uint64_t addr, uint8_t* out, size_t n);
  // ReadAnonymous for at most kPagemapBatch pages.
  bool ReadBacked(uint64_t addr, uint8_t* out, size_t n);
  // [addr, addr + n) of one mapping, whichever kind it is.
  bool ReadMapped(const TargetMapping& m, uint64_t addr, uint8_t* out, size_t n);
  const Slot* Load(uint64_t addr);

  uint32_t pid_;
  int mem_fd_ = -1;  // /proc/PID/mem, opened when process_vm_readv is refused
  int pagemap_fd_ = -1;  // /proc/PID/pagemap; -1 if it cannot be read
  bool use_mem_file_ = false;
  std::vector<TargetMapping> mappings_;
  std::vector<Slot> slots_;
  std::vector<uint64_t> entries_;           // pagemap entries of one batch
  std::vector<iovec> local_, remote_;       // the runs of pages of one batch
  uint64_t last_end_ = 0;  // the end of the last block read: reads that go on from it stream
  uint64_t reads_ = 0;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_LIVE_MEMORY_H_
