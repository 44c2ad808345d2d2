// Says on stderr what a damaged trace cost: samples and records that could
// not be parsed (runs of them, with the time span around each, as lost
// events are reported) and calls whose values the kernel cannot have
// produced, which were not replayed. Answers about pages changed in those
// spans may be incomplete; the user must know, but they are still answers.
//
//   WarnAboutDamage(trace->index().stats());
//   // pageblame: warning: 2 samples could not be parsed between 216.083882 and
//   //   216.084001; pages changed then may be misattributed
#ifndef PAGEBLAME_CLI_DAMAGE_WARNINGS_H_
#define PAGEBLAME_CLI_DAMAGE_WARNINGS_H_

#include "processor/index/trace_stats.h"

namespace pageblame::cli {

void WarnAboutDamage(const index::TraceStats& stats);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_DAMAGE_WARNINGS_H_
