// Where in its file an instruction of a call's stack is: the offset that
// names a frame no symbol names (folded stacks' "[libfoo.so+0x1234]").
//
//   std::optional<uint64_t> off = FileOffsetAt(idx, ev, frame.ip);
//
// The mapping is the version holding `ip` at the call's time in the process
// that was ev.pid then (of a reused pid, the newest process started by
// then; the oldest if none had). nullopt when no version holds it then or
// the one that does maps no file.
#ifndef PAGEBLAME_ANALYSIS_FILE_OFFSET_H_
#define PAGEBLAME_ANALYSIS_FILE_OFFSET_H_

#include <cstdint>
#include <optional>

#include "processor/index/trace_index.h"

namespace pageblame::analysis {

std::optional<uint64_t> FileOffsetAt(const index::TraceIndex& idx, const index::CallEvent& ev, uint64_t ip);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_FILE_OFFSET_H_
