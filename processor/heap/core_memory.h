// CoreMemory: the memory an ELF core holds (gdb's gcore, the kernel,
// createdump / dotnet-dump), read from the file mapped read-only. The core's
// headers and notes are read by regions::ElfCoreReader; its mappings are the
// PT_LOAD segments, named by the NT_FILE entries that cover them.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<CoreMemory> m, CoreMemory::Open("app.core"));
//   bool ok = m->Read(addr, buf, n);   // false where the core holds no bytes
//
// A segment whose data is not in the file (a core cut short, a trimmed
// copy) or the part of a segment past its p_filesz (left out by the core's
// writer) reads as false: the walker then names what it could not read.
#ifndef PAGEBLAME_HEAP_CORE_MEMORY_H_
#define PAGEBLAME_HEAP_CORE_MEMORY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/base/mapped_file.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class CoreMemory : public TargetMemory {
 public:
  // Errors name the file (not a core, truncated headers, ...).
  static absl::StatusOr<std::unique_ptr<CoreMemory>> Open(const std::string& path);

  bool Read(uint64_t addr, void* out, size_t n) override;
  // The segment's bytes from `addr` on, in the mapped file.
  absl::Span<const uint8_t> Contiguous(uint64_t addr) const override;
  const std::vector<TargetMapping>& mappings() const override { return mappings_; }
  uint32_t pid() const override { return pid_; }
  bool live() const override { return false; }
  std::optional<uint64_t> threads() const override {
    return threads_ ? std::optional<uint64_t>(threads_) : std::nullopt;
  }
  // Segments whose data the file does not hold (wholly or in part).
  int missing_segments() const { return missing_; }

 private:
  struct Segment {
    uint64_t start = 0, end = 0;  // the bytes the file holds: [start, end)
    uint64_t offset = 0;          // of `start` in the file
  };
  CoreMemory() = default;
  // The segment holding `addr`, or nullptr.
  const Segment* SegmentAt(uint64_t addr) const;

  std::unique_ptr<MappedFile> file_;
  std::vector<TargetMapping> mappings_;
  std::vector<Segment> segments_;  // sorted by start
  uint32_t pid_ = 0, threads_ = 0;
  int missing_ = 0;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_CORE_MEMORY_H_
