// What a folded recording read from a checkpoint says (record --max-size,
// recorder/chunk_folder.h): the recorder wrote TRACE.index while it
// recorded and never replaced it at a stop (it was killed: SIGKILL, the OOM
// killer, a reboot; or it still records). The answers are the recording up
// to the checkpoint; the chunk files perf wrote after it are named, with
// whether they can be read alone.
//
//   if (const auto& c = trace->checkpoint()) warnings.push_back(CheckpointWarning(*c, "t.data"));
//   // "warning: the recording ended without a stop: the recorder stopped at the checkpoint of
//   //  2026-11-29 05:10:12 UTC (trace time 1234.567890, 5 chunks folded, the last t.data.2026112905101234);
//   //  the answers are the recording up to then; 2 chunk files after it were not folded: ... (why)"
//
// Why the chunks after it are not folded in on reading: the replay's state
// at the checkpoint (calls whose exit is in the next chunk, the processes'
// address spaces, perf -z's zstd stream) is not in the index, and replaying
// a later chunk alone over it would be silently wrong.
#ifndef PAGEBLAME_SESSION_CHECKPOINT_NOTE_H_
#define PAGEBLAME_SESSION_CHECKPOINT_NOTE_H_

#include <string>
#include <vector>

#include "processor/replay/trace_loader.h"

namespace pageblame::session {

// Whether the file at `index` is the checkpoint of a folded recording (its
// header alone: the whole file is checked when it is loaded).
bool IsCheckpointIndex(const std::string& index);

// The files a killed recording left beside TRACE that its checkpoint does
// not hold: TRACE itself (perf's chunk being written), TRACE.<stamp>
// chunks, and TRACE.index.new (a checkpoint the kill cut short: ignored).
std::vector<std::string> LeftAfterCheckpoint(const std::string& trace);

std::string CheckpointWarning(const replay::FoldCheckpoint& c, const std::string& trace);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_CHECKPOINT_NOTE_H_
