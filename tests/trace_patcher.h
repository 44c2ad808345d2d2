// For tests of damaged traces: where the fields of a trace's tracepoint
// samples are in the file, so that a test can change one value the way a
// broken recorder or a bad disk would, in a copy.
//
//   ASSIGN_OR_RETURN(TracePatcher t, TracePatcher::Open(TracePath("alloc-fp.data")));
//   std::vector<uint64_t> at = t.FieldOffsets("syscalls:sys_enter_mmap", "len");
//   t.Write(at[0], 0xffffff0000000000);
//   t.Save(ScratchPath("wrapped.data"));
//
// File-mode traces with an uncompressed data section only (offsets are file
// offsets of the sample's own bytes).
#ifndef PAGEBLAME_TESTS_TRACE_PATCHER_H_
#define PAGEBLAME_TESTS_TRACE_PATCHER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::testing {

class TracePatcher {
 public:
  static absl::StatusOr<TracePatcher> Open(const std::string& path);

  // The file offset of `field` in every sample of `event` ("syscalls:
  // sys_enter_mmap", as perf names the attr), in file order.
  absl::StatusOr<std::vector<uint64_t>> FieldOffsets(const std::string& event,
                                                     const std::string& field) const;
  // The file offset of every record of `type` (perf::kRecordComm, ...), at
  // its header, in file order.
  absl::StatusOr<std::vector<uint64_t>> RecordOffsets(uint32_t type) const;
  // The file offset of the sample_type of the trace's first attr.
  uint64_t FirstSampleTypeOffset() const;

  uint64_t Read(uint64_t offset) const;
  void Write(uint64_t offset, uint64_t value);
  // Replaces the bytes at `offset` (same length).
  void Overwrite(uint64_t offset, const std::string& bytes);
  const std::string& bytes() const { return bytes_; }
  absl::Status Save(const std::string& path) const;

 private:
  std::string path_;
  std::string bytes_;
};

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_TRACE_PATCHER_H_
