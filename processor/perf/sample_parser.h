// Layout of PERF_RECORD_SAMPLE bodies and of the sample_id trailer of other
// records, as a function of perf_event_attr.sample_type. Internal to perf/.
//
// The kernel writes sample fields in a fixed order (kernel/events/core.c
// perf_output_sample(): IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
// PERIOD, READ, CALLCHAIN, RAW, BRANCH_STACK, ...), and the sample_id trailer
// of non-sample records as TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER
// (__perf_event_header__init_id / perf_event__output_id_sample).
//
//   Sample s;
//   RETURN_IF_ERROR(ParseSampleBody(attr, body, &s, &scratch));
#ifndef PAGEBLAME_PERF_SAMPLE_PARSER_H_
#define PAGEBLAME_PERF_SAMPLE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "processor/perf/perf_records.h"

namespace pageblame::perf {

// Index (in u64 words from the start of the sample body, i.e. after the
// perf_event_header) of the sample's id, or -1 if it carries none. Mirrors
// perf's evsel.c __evsel__calc_id_pos().
int SampleIdPos(uint64_t sample_type);

// Index of the id in the sample_id trailer counted from the record's end in
// u64 words (1 = the last word), or -1. Mirrors __evsel__calc_is_pos().
int TrailerIdPos(uint64_t sample_type);

// Bytes of the sample_id trailer for this sample_type (when sample_id_all).
size_t TrailerSize(uint64_t sample_type);

// The field offsets of samples of this sample_type and read_format (see
// SampleLayout); `fixed` is false when they vary from sample to sample.
SampleLayout LayoutOf(uint64_t sample_type, uint64_t read_format);

// Parses the body of a PERF_RECORD_SAMPLE (the bytes after its header) far
// enough to reach CALLCHAIN and RAW, and, when the attr has them, REGS_USER
// and STACK_USER (skipping BRANCH_STACK before them). A REGS_USER or
// STACK_USER that does not fit is no error: the sample keeps what fit and
// says what was wrong in Sample::user_copy_error. `out->attr` is set to &attr. If the
// callchain is not 8-byte aligned in memory it is copied to `scratch` (so
// `out->callchain` may point there). Fails on a body too short for what
// sample_type says it holds. With attr.layout made for the attr's
// sample_type and read_format, the fields are read at their offsets (the
// loader parses every sample of a memory syscall; finding each field in
// turn was a tenth of its instructions); the answer is the same either way.
absl::Status ParseSampleBody(const EventAttr& attr, absl::Span<const uint8_t> body,
                             Sample* out, std::vector<uint64_t>* scratch);

// Parses a sample_id trailer of exactly TrailerSize(sample_type) bytes.
void ParseTrailer(uint64_t sample_type, absl::Span<const uint8_t> trailer, SampleId* out);

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_SAMPLE_PARSER_H_
