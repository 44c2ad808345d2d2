// TargetMemory: the memory of the process whose heap is walked — a live
// process (LiveMemory), an ELF core (CoreMemory) or bytes given by a test or
// a fuzzer (BufferMemory) — and its mappings. The walker reads only through
// this interface, so every read is checked: an address that is not mapped,
// or whose bytes a core does not hold, reads as false, never as garbage.
//
//   std::unique_ptr<TargetMemory> m = ...;
//   uint64_t word;
//   if (!m->ReadWord(addr, &word)) return Damage("cannot read 0x...");
//
// Reads may be served from a cache (a live process is read in blocks);
// Forget() drops it, so that a second read sees the process as it is now.
// A walk through a whole heap reads in bulk instead (ReadBulk, or no read at
// all where the bytes are already in this process: Contiguous).
#ifndef PAGEBLAME_HEAP_TARGET_MEMORY_H_
#define PAGEBLAME_HEAP_TARGET_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"

namespace pageblame::heap {

// One mapping of the target, as /proc/PID/maps or a core's NT_FILE and
// PT_LOAD headers say it.
struct TargetMapping {
  uint64_t start = 0, end = 0;  // [start, end)
  bool read = false, write = false, exec = false;
  uint64_t offset = 0;          // file offset (0 for anonymous memory)
  std::string path;             // file path, "[heap]", "[stack]", or empty
};

class TargetMemory {
 public:
  virtual ~TargetMemory() = default;

  // Copies [addr, addr + n) into `out`; false if any byte of it cannot be
  // read (not mapped, not in the core, the process is gone).
  virtual bool Read(uint64_t addr, void* out, size_t n) = 0;
  // Drops cached bytes (a live process: the next read is a new read).
  virtual void Forget() {}
  // Read() for a large range read once, front to back: no cache is filled
  // (a live process: its pages in as few system calls as it takes).
  virtual bool ReadBulk(uint64_t addr, void* out, size_t n) { return Read(addr, out, n); }
  // The bytes from `addr` on that this process already holds in memory (a
  // core's mapped file, a test's buffer), up to where they stop: reading
  // them needs no copy. Empty where there are none or the target is live.
  virtual absl::Span<const uint8_t> Contiguous(uint64_t addr) const {
    (void)addr;
    return {};
  }
  // Sorted by start, disjoint.
  virtual const std::vector<TargetMapping>& mappings() const = 0;
  // The process id (a core: its NT_PRPSINFO), 0 if unknown.
  virtual uint32_t pid() const = 0;
  // True for a running process (reads may be torn).
  virtual bool live() const = 0;
  // Threads of the process, when known (a live process's tasks, a core's
  // NT_PRSTATUS notes).
  virtual std::optional<uint64_t> threads() const { return std::nullopt; }
  // Reads the mappings again (a live process maps and unmaps as it runs).
  virtual bool Refresh() { return true; }
  // A file of the target's file system (a live process: through
  // /proc/PID/root, since the target may run in a container).
  virtual std::string HostPath(const std::string& path) const { return path; }

  bool ReadWord(uint64_t addr, uint64_t* out) { return Read(addr, out, sizeof(*out)); }
  // The mapping holding `addr`, or nullptr.
  const TargetMapping* MappingAt(uint64_t addr) const;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_TARGET_MEMORY_H_
