// Parsers for the parts of perf.data outside the record stream: the
// perf_event_attr entries, the feature sections (file mode) and the
// user-space header records that carry the same information in pipe mode
// (HEADER_ATTR, HEADER_EVENT_TYPE, EVENT_UPDATE, HEADER_BUILD_ID,
// HEADER_FEATURE). Shared by the file and pipe readers; internal to perf/.
//
//   EventAttr attr;
//   RETURN_IF_ERROR(ParseEventAttr(attr_bytes, &attr));
//   RETURN_IF_ERROR(ParseFeature(format::kFeatHostname, section, &info));
//
// All parsers are bounds-checked (ByteReader) and return a one-line error
// saying what was short; the caller adds the file offset.
#ifndef PAGEBLAME_PERF_HEADER_PARSER_H_
#define PAGEBLAME_PERF_HEADER_PARSER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "processor/perf/perf_records.h"

namespace pageblame::perf {

// Checks that a file (or stream: `what` says which) of `size` bytes holds at
// least the magic and the header size that start every perf.data: DataLoss
// naming `path` and offset 0 for an empty or shorter one.
absl::Status CheckStart(const std::string& path, const char* what, uint64_t size);

// Checks the PERFILE2 magic read as a native u64: OK for native byte order,
// a one-line error (naming `path`) for the other byte order, the v1
// "PERFFILE" format (Unimplemented), or anything else (DataLoss, quoting the
// 8 bytes at offset 0).
absl::Status CheckMagic(const std::string& path, uint64_t magic);

// The size a perf_event_attr says it has (attr.size; 0 means
// PERF_ATTR_SIZE_VER0, as header.c read_attr() assumes). Fails if fewer than
// 8 bytes are available or the size is below PERF_ATTR_SIZE_VER0.
absl::Status ReadAttrSize(absl::Span<const uint8_t> bytes, uint32_t* size);

// Parses one perf_event_attr occupying exactly `bytes` (its attr.size bytes).
// Fields past the end of an older, smaller attr stay 0. `name` and `ids` of
// `out` are left untouched.
absl::Status ParseEventAttr(absl::Span<const uint8_t> bytes, EventAttr* out);

// Applies one feature section (file mode) or HEADER_FEATURE payload (pipe
// mode) to `info`: TRACING_DATA, BUILD_ID, HOSTNAME, OSRELEASE, VERSION, ARCH,
// NRCPUS, CMDLINE, EVENT_DESC (names matched to info->attrs by id),
// COMPRESSED. Other features are ignored.
absl::Status ParseFeature(int feature, absl::Span<const uint8_t> bytes, FileInfo* info);

// Parses a sequence of perf_record_header_build_id records (the BUILD_ID
// feature section, or one pipe-mode HEADER_BUILD_ID record) and appends them.
absl::Status ParseBuildIds(absl::Span<const uint8_t> bytes, std::vector<BuildIdEntry>* out);

// Pipe-mode PERF_RECORD_HEADER_ATTR: perf_event_attr then its ids. Appends
// a new EventAttr to info->attrs.
absl::Status ApplyHeaderAttr(absl::Span<const uint8_t> record, FileInfo* info);

// PERF_RECORD_EVENT_UPDATE: only the NAME update matters to us.
absl::Status ApplyEventUpdate(absl::Span<const uint8_t> record, FileInfo* info);

// PERF_RECORD_HEADER_EVENT_TYPE (old perf): a name for a tracepoint config.
absl::Status ApplyEventType(absl::Span<const uint8_t> record, FileInfo* info);

// PERF_RECORD_HEADER_FEATURE: u64 feature id, then the feature's payload.
absl::Status ApplyHeaderFeature(absl::Span<const uint8_t> record, FileInfo* info);

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_HEADER_PARSER_H_
