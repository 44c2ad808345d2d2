// The chunk files of a recording TRACE that perf wrote with
// --switch-output: TRACE.<YYYYmmddHHMMSScc>, the 16 digits of the local time
// at which perf began the file, to the hundredth of a second
// (record__switch_output: "%s.%s", the output name and the timestamp). The
// names sort in time order (perf starts at most one file a hundredth).
//
//   std::vector<std::string> chunks = ChunkFiles::Of("app.data");
//   // {"app.data.2026112901450234", "app.data.2026112901450277", ...}
//
// TRACE.index and the other side files never match: their suffix is not 16 digits.
#ifndef PAGEBLAME_PERF_CHUNK_FILES_H_
#define PAGEBLAME_PERF_CHUNK_FILES_H_

#include <string>
#include <string_view>
#include <vector>

namespace pageblame::perf {

class ChunkFiles {
 public:
  static constexpr size_t kStampDigits = 16;
  // The chunks beside `trace` (its directory listed once), sorted by name;
  // empty if none or the directory cannot be read.
  static std::vector<std::string> Of(const std::string& trace);
  // Whether `name` (a file name, no directory) is a chunk of `trace_name`.
  static bool IsChunkOf(std::string_view name, std::string_view trace_name);
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_CHUNK_FILES_H_
