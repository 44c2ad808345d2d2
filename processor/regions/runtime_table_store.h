// RuntimeTableStore: the .NET runtime tables `pageblame record` saves beside
// a trace, so that `attribute -i TRACE --unaccounted` needs no dump: the
// directory TRACE.runtime/ holds one `pageblame dotnet-regions` table per
// process and moment, named PID-TIME.txt (TIME: nanoseconds on the trace's
// clock, CLOCK_MONOTONIC as `record` runs perf with -k mono).
//
//   for (const RuntimeTableStore::Entry& e : RuntimeTableStore::List("app.data")) ...
//   std::optional<Entry> t = RuntimeTableStore::Latest(entries, pid, at);
//
// Files whose names do not follow the pattern are not tables and are left
// alone. `record` makes them (recorder/recording_files.h), and sets an older
// trace's aside with it, as perf's rule for an existing trace does.
#ifndef PAGEBLAME_REGIONS_RUNTIME_TABLE_STORE_H_
#define PAGEBLAME_REGIONS_RUNTIME_TABLE_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pageblame::regions {

class RuntimeTableStore {
 public:
  struct Entry {
    uint32_t pid = 0;
    uint64_t time = 0;  // ns, the trace's clock
    std::string path;
  };

  static std::string DirFor(const std::string& trace);  // "TRACE.runtime"
  static std::string PathFor(const std::string& trace, uint32_t pid, uint64_t time);
  static std::string NameFor(uint32_t pid, uint64_t time);  // "PID-TIME.txt"
  // The name's pid and time, or nullopt if it is no table's name.
  static std::optional<Entry> ParseName(absl::string_view name);
  // The tables beside `trace`, by pid then time; none if there is no directory.
  static std::vector<Entry> List(const std::string& trace);
  // The latest table of `pid` at or before `at`.
  static std::optional<Entry> Latest(const std::vector<Entry>& entries, uint32_t pid, uint64_t at);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_RUNTIME_TABLE_STORE_H_
