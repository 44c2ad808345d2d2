// The records pageblame takes from a perf.data file, parsed into plain structs.
// Layouts mirror tools/lib/perf/include/perf/event.h and
// include/uapi/linux/perf_event.h; only the fields replay needs are kept.
// string_view / Span members point into the reader's buffer and stay valid
// only until the next PerfReader::Next() call (a Sample's callchain, if it had
// to be copied for alignment, only until the next ParseSample()).
#ifndef PAGEBLAME_PERF_PERF_RECORDS_H_
#define PAGEBLAME_PERF_PERF_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace pageblame::perf {

// perf_event_header.type values (include/uapi/linux/perf_event.h and
// tools/lib/perf/include/perf/event.h for the user-space ones >= 64).
enum RecordType : uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordFork = 7,
  kRecordSample = 9,
  kRecordMmap2 = 10,
  kRecordLostSamples = 13,
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordEventUpdate = 78,
  kRecordHeaderFeature = 80,
  kRecordFinishedInit = 82,
};

// perf_event_header.misc bits we use.
inline constexpr uint16_t kMiscCommExec = 1 << 13;      // PERF_RECORD_MISC_COMM_EXEC
inline constexpr uint16_t kMiscMmapBuildId = 1 << 14;   // PERF_RECORD_MISC_MMAP_BUILD_ID
inline constexpr uint16_t kMiscCpuModeMask = 7;
inline constexpr uint16_t kMiscKernel = 1;
inline constexpr uint16_t kMiscUser = 2;

// perf_event_attr.sample_type bits.
enum SampleType : uint64_t {
  kSampleIp = 1u << 0,
  kSampleTid = 1u << 1,
  kSampleTime = 1u << 2,
  kSampleAddr = 1u << 3,
  kSampleRead = 1u << 4,
  kSampleCallchain = 1u << 5,
  kSampleId = 1u << 6,
  kSampleCpu = 1u << 7,
  kSamplePeriod = 1u << 8,
  kSampleStreamId = 1u << 9,
  kSampleRaw = 1u << 10,
  kSampleBranchStack = 1u << 11,
  kSampleRegsUser = 1u << 12,
  kSampleStackUser = 1u << 13,
  kSampleWeight = 1u << 14,
  kSampleDataSrc = 1u << 15,
  kSampleIdentifier = 1u << 16,
  kSampleTransaction = 1u << 17,
  kSampleRegsIntr = 1u << 18,
  kSamplePhysAddr = 1u << 19,
  kSampleAux = 1u << 20,
  kSampleCgroup = 1u << 21,
  kSampleDataPageSize = 1u << 22,
  kSampleCodePageSize = 1u << 23,
  kSampleWeightStruct = 1u << 24,
};

// Callchain context markers (PERF_CONTEXT_*): entries >= kContextMax are not
// ips but switch the context of the ips that follow.
inline constexpr uint64_t kContextHv = static_cast<uint64_t>(-32);
inline constexpr uint64_t kContextKernel = static_cast<uint64_t>(-128);
inline constexpr uint64_t kContextUser = static_cast<uint64_t>(-512);
inline constexpr uint64_t kContextMax = static_cast<uint64_t>(-4095);

// Byte offsets, in a sample body, of the fields replay reads, for a
// sample_type whose fields before CALLCHAIN all have fixed sizes (every
// sample_type but one with a READ group). Made by LayoutOf() in
// sample_parser.h; ParseSampleBody reads through it when it matches the
// attr (-1: the sample has no such field).
struct SampleLayout {
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  bool fixed = false;  // false: fields are found one by one
  int16_t identifier = -1, ip = -1, tid = -1, time = -1, id = -1, cpu = -1;
  uint16_t prefix = 0;  // bytes before CALLCHAIN (or RAW)
};

// One perf_event_attr of the file plus what the feature sections say of it.
struct EventAttr {
  uint32_t type = 0;  // PERF_TYPE_TRACEPOINT == 2
  uint64_t config = 0;  // for tracepoints: the tracepoint's format id
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t sample_regs_user = 0;  // which user registers REGS_USER holds
  uint64_t sample_regs_intr = 0;  // needed to skip REGS_INTR
  // attr.sample_stack_user: bytes of user stack each sample copies
  // (--call-graph dwarf,SIZE); 0 when the attr predates the field.
  uint32_t sample_stack_user = 0;
  // attr.branch_sample_type: its PERF_SAMPLE_BRANCH_HW_INDEX bit adds a word
  // to BRANCH_STACK, which comes before REGS_USER in a sample.
  uint64_t branch_sample_type = 0;
  bool sample_id_all = false;
  // attr.mmap_data (perf record -d): MMAP2 records for data mappings too,
  // and, at attach, for every mapping that is readable or executable.
  bool mmap_data = false;
  // attr.clockid when attr.use_clockid (perf record -k/--clockid): the clock
  // of every timestamp; unset: perf's own clock (no user-space clock reads it).
  std::optional<int32_t> clockid;
  std::string name;  // "syscalls:sys_enter_mmap" from EVENT_DESC; may be empty
  std::vector<uint64_t> ids;
  SampleLayout layout;  // set by the reader (PerfReader::IndexAttrs)
};

// PERF_SAMPLE_REGS_USER abi values (include/uapi/linux/perf_event.h).
inline constexpr uint64_t kRegsAbiNone = 0;  // no user registers (kernel thread)
inline constexpr uint64_t kRegsAbi32 = 1;
inline constexpr uint64_t kRegsAbi64 = 2;
// PERF_SAMPLE_BRANCH_HW_INDEX in attr.branch_sample_type.
inline constexpr uint64_t kBranchHwIndex = 1u << 17;

// What was wrong with a sample's REGS_USER / STACK_USER, if anything. A
// sample with such a problem is still a good sample (its syscall is
// replayed); only its unwinding is cut short, and the unwinder counts it.
enum class UserCopyError : uint8_t {
  kNone,
  kBranchStackCut,  // BRANCH_STACK runs past the record: nothing after it read
  kRegsCut,         // the REGS_USER values run past the record
  kStackCut,        // STACK_USER's size runs past the record: no stack bytes
  kDynSizeTooBig,   // dyn_size > size (or missing): the size copied bytes kept
};

// PERF_RECORD_SAMPLE, only the fields replay needs. `callchain` is the raw
// chain including PERF_CONTEXT_* markers, leaf first; `raw` is the tracepoint
// payload (common_type first) that decode/ reads with libtraceevent formats.
struct Sample {
  const EventAttr* attr = nullptr;  // never null for a parsed sample
  uint64_t id = 0;
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;  // ns, perf clock
  uint32_t cpu = 0;
  absl::Span<const uint64_t> callchain;
  absl::Span<const uint8_t> raw;
  // --call-graph dwarf (perf_output_sample: BRANCH_STACK, REGS_USER,
  // STACK_USER after RAW). regs_abi is kRegsAbi*; user_regs holds one u64
  // per bit set in attr->sample_regs_user, lowest bit first (read them with
  // memcpy: the span may be unaligned); empty with kRegsAbiNone.
  // user_stack is the copy of the user stack from the sample's sp up, the
  // dyn_size bytes the kernel could read of it.
  uint64_t regs_abi = kRegsAbiNone;
  absl::Span<const uint8_t> user_regs;
  absl::Span<const uint8_t> user_stack;
  UserCopyError user_copy_error = UserCopyError::kNone;
};

// The sample_id trailer that sideband records carry when sample_id_all is set.
struct SampleId {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
  bool has_time = false;
  bool has_cpu = false;
};

struct CommRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string_view comm;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC: the process exec'd
  SampleId sample_id;
};

// PERF_RECORD_FORK and PERF_RECORD_EXIT share one layout.
struct TaskRecord {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t tid = 0;
  uint32_t ptid = 0;
  uint64_t time = 0;  // the record's own time field
  SampleId sample_id;
};

// PERF_RECORD_MMAP and PERF_RECORD_MMAP2 (prot/flags/build id only in MMAP2).
struct MmapRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  uint32_t prot = 0;   // PROT_*; for MMAP (v1): PROT_EXEC if !data
  uint32_t flags = 0;  // MAP_*; 0 for MMAP (v1)
  bool has_prot = false;
  std::string_view build_id;  // raw bytes, empty unless kMiscMmapBuildId
  std::string_view filename;
  uint16_t cpumode = 0;  // misc & kMiscCpuModeMask
  SampleId sample_id;
};

// PERF_RECORD_LOST (lost ring-buffer records) or PERF_RECORD_LOST_SAMPLES.
struct LostRecord {
  uint64_t id = 0;  // attr id, 0 for LOST_SAMPLES
  uint64_t lost = 0;
  bool samples = false;  // true for PERF_RECORD_LOST_SAMPLES
  SampleId sample_id;
};

// One record as read from the data section, not yet parsed.
struct RawRecord {
  static constexpr uint64_t kNotCompressed = ~uint64_t{0};

  uint32_t type = 0;
  uint16_t misc = 0;
  absl::Span<const uint8_t> bytes;  // the whole record, header included
  // Offset in the file/stream, for error messages. For a record that came
  // out of PERF_RECORD_COMPRESSED data: the offset of the COMPRESSED record
  // its first byte was decompressed from.
  uint64_t offset = 0;
  // For such a record, its offset in the decompressed stream (all the
  // trace's compressed data decompressed, end to end); else kNotCompressed.
  uint64_t decompressed_offset = kNotCompressed;
};

// HEADER_BUILD_ID feature entries: build ids of the DSOs perf saw.
struct BuildIdEntry {
  int32_t pid = 0;
  std::string build_id;  // raw bytes
  std::string filename;
};

// Everything the file says before/outside the data section.
struct FileInfo {
  bool pipe_mode = false;
  std::vector<EventAttr> attrs;
  std::string tracing_data;  // TRACING_DATA feature, raw (decode/ parses it)
  std::vector<BuildIdEntry> build_ids;
  std::string hostname;
  std::string os_release;
  std::string perf_version;
  std::string arch;
  std::vector<std::string> cmdline;
  // NRCPUS feature: CPUs the recording machine had (0 = unknown); CPU
  // numbers in samples are below it.
  uint32_t nr_cpus = 0;
  uint64_t data_size = 0;  // bytes of the data section (0 if unknown: pipe)
  // HEADER_COMPRESSED feature (perf record -z): how the data's COMPRESSED
  // records were made. Only `compression_type` is used (zstd is the only
  // one perf has); the rest is informational.
  bool compressed = false;  // the feature was present
  uint32_t compression_type = 0;   // 1 = zstd (format::kCompressionZstd)
  uint32_t compression_level = 0;
  uint32_t compression_ratio = 0;  // perf's estimate, rounded
  uint32_t compression_mmap_len = 0;  // perf's decompression buffer size
  // HEADER_CLOCK_DATA (perf record -k, perf 5.11+): the recording's start on
  // attr.clockid's clock (ns) and that clock's id; unset without the feature.
  std::optional<uint64_t> clock_start;
  std::optional<int32_t> clock_start_clockid;
  // The same moment on the wall clock (ns since the epoch): with the file's
  // mtime, when the recording ended on attr.clockid's clock.
  std::optional<uint64_t> clock_start_wall;
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_PERF_RECORDS_H_
