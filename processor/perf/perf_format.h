// On-disk constants of the perf.data format that the reader needs beyond
// perf_records.h: magic, header layouts, perf_event_attr field offsets,
// feature ids and the user-space record types we consume or skip.
// Sources: tools/perf/util/header.{c,h} (perf_file_header, HEADER_* feature
// bits), tools/lib/perf/include/perf/event.h (user records >= 64) and
// include/uapi/linux/perf_event.h (perf_event_attr, PERF_ATTR_SIZE_VER*).
// Internal to processor/perf/.
#ifndef PAGEBLAME_PERF_PERF_FORMAT_H_
#define PAGEBLAME_PERF_PERF_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace pageblame::perf::format {

// "PERFILE2" read as a native u64 (header.c: __perf_magic2). A file written
// on a host of the other byte order reads as its byte swap ("2ELIFREP").
inline constexpr uint64_t kMagic2 = 0x32454c4946524550ULL;
inline constexpr uint64_t kMagic2Swapped = 0x50455246494c4532ULL;
// "PERFFILE": the version-1 format (perf before 2.6.3x), not supported.
inline constexpr uint64_t kMagic1 = 0x454c494646524550ULL;

// struct perf_pipe_file_header { u64 magic; u64 size; }.
inline constexpr size_t kPipeHeaderSize = 16;
// struct perf_file_header: magic, size, attr_size, attrs/data/event_types
// sections (16 bytes each), then the 256-bit adds_features bitmap.
inline constexpr size_t kFileHeaderSize = 104;
// The previous layout without the feature bitmap (header.c accepts it).
inline constexpr size_t kFileHeaderSizeNoFeatures = 72;
inline constexpr size_t kAttrsSectionOffset = 24;
inline constexpr size_t kDataSectionOffset = 40;
inline constexpr size_t kFeatureBitmapOffset = 72;
inline constexpr size_t kFeatureBitmapWords = 4;  // HEADER_FEAT_BITS = 256
inline constexpr size_t kFileSectionSize = 16;    // perf_file_section {offset, size}

inline constexpr size_t kEventHeaderSize = 8;  // perf_event_header

// perf_event_attr (include/uapi/linux/perf_event.h).
inline constexpr size_t kAttrSizeVer0 = 64;  // PERF_ATTR_SIZE_VER0; attr.size 0 means this
inline constexpr size_t kAttrTypeOffset = 0;
inline constexpr size_t kAttrSizeOffset = 4;
inline constexpr size_t kAttrConfigOffset = 8;
inline constexpr size_t kAttrSampleTypeOffset = 24;
inline constexpr size_t kAttrReadFormatOffset = 32;
inline constexpr size_t kAttrFlagsOffset = 40;  // the bitfield word
inline constexpr uint64_t kAttrFlagMmapData = 1ULL << 17;  // perf record -d
inline constexpr uint64_t kAttrFlagSampleIdAll = 1ULL << 18;
inline constexpr uint64_t kAttrFlagUseClockid = 1ULL << 25;  // perf record -k
inline constexpr size_t kAttrBranchSampleTypeOffset = 72;  // since VER2 (80)
inline constexpr size_t kAttrSampleRegsUserOffset = 80;  // since VER3 (96)
inline constexpr size_t kAttrSampleStackUserOffset = 88;  // u32, since VER3
inline constexpr size_t kAttrClockidOffset = 92;  // s32, since VER3
inline constexpr size_t kAttrSampleRegsIntrOffset = 96;  // since VER4 (104)

// perf_event_attr.read_format bits (PERF_FORMAT_*).
inline constexpr uint64_t kFormatTotalTimeEnabled = 1 << 0;
inline constexpr uint64_t kFormatTotalTimeRunning = 1 << 1;
inline constexpr uint64_t kFormatId = 1 << 2;
inline constexpr uint64_t kFormatGroup = 1 << 3;
inline constexpr uint64_t kFormatLost = 1 << 4;

// Feature bits (tools/perf/util/header.h, enum HEADER_*).
enum Feature : int {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCompressed = 27,
  kFeatClockData = 29,
};

// User-space record types (tools/lib/perf/include/perf/event.h) beyond the
// ones in perf_records.h that need special handling.
inline constexpr uint32_t kRecordUserTypeStart = 64;
inline constexpr uint32_t kRecordAuxtrace = 71;     // payload follows the record
// PERF_RECORD_COMPRESSED (perf record -z): header, then zstd-compressed
// bytes up to header.size (unpadded, so the records after it may be
// misaligned). PERF_RECORD_COMPRESSED2 (perf since 2025, "perf record: Add
// 8-byte aligned event type PERF_RECORD_COMPRESSED2"): header, u64 data_size,
// then data_size compressed bytes, zero-padded to header.size (a multiple of
// 8). Both carry pieces of one zstd stream of ordinary records
// (record_decompressor.h).
inline constexpr uint32_t kRecordCompressed = 81;
inline constexpr uint32_t kRecordCompressed2 = 83;
inline constexpr size_t kCompressed2HeaderSize = 16;

// HEADER_COMPRESSED's comp_type (tools/perf/util/compress.h, enum
// perf_compress_type).
inline constexpr uint32_t kCompressionZstd = 1;

// perf_record_header_build_id misc bit: build_id[20] holds the id's size.
inline constexpr uint16_t kMiscBuildIdSize = 1 << 15;
// perf_record_header_build_id: header, s32 pid, u8 build_id[24], filename[].
inline constexpr size_t kBuildIdRecordFixedSize = 8 + 4 + 24;
inline constexpr size_t kBuildIdMaxSize = 20;

// PERF_RECORD_EVENT_UPDATE types (perf/event.h, PERF_EVENT_UPDATE__*).
inline constexpr uint64_t kEventUpdateName = 1;

// PERF_RECORD_MISC_MMAP_DATA: a v1 MMAP of a non-executable mapping.
inline constexpr uint16_t kMiscMmapData = 1 << 13;

// Upper bound on one TRACING_DATA payload, to refuse absurd sizes from a
// corrupt stream before allocating (real ones are well under 100 MB).
inline constexpr uint64_t kMaxTracingDataSize = 1ULL << 30;

}  // namespace pageblame::perf::format

#endif  // PAGEBLAME_PERF_PERF_FORMAT_H_
