// DsoLookup: one lookup of a DSO's files (DsoLocator::Locate) and what it
// found, with each file's size and modification time. Replaying a --call-graph
// dwarf trace reads CFI from the files found, so what was kept from a replay
// (the recording's index, replay/recording_file.h) holds only while the same
// lookups find the same files: a binary rebuilt, installed into the build-id
// cache since, or a --symfs that names another tree makes the stacks
// differ, and the index is stale.
//
//   DsoLookup l = DsoLookup::Of(path, build_id, locator.Locate(path, build_id));
//   ... later, with the locator of that day:
//   if (std::string why = l.Changed(locator); !why.empty()) replay again;
#ifndef PAGEBLAME_SYMBOLS_DSO_LOOKUP_H_
#define PAGEBLAME_SYMBOLS_DSO_LOOKUP_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "processor/symbols/dso_locator.h"

namespace pageblame::symbols {

// A file's size and modification time (ns); all zero for no file.
struct FileStamp {
  uint64_t size = 0;
  uint64_t mtime_ns = 0;
  static FileStamp Of(const std::string& path);
  bool operator==(const FileStamp& o) const { return size == o.size && mtime_ns == o.mtime_ns; }
};

struct DsoLookup {
  std::string path, build_id;        // what was looked for (build id raw)
  std::string elf_path, debug_path;  // what was found ("": nothing)
  FileStamp elf, debug;

  static DsoLookup Of(std::string_view path, std::string_view build_id, const DsoLocation& where);
  // "" if `locator` finds the same files, unchanged; else what differs.
  std::string Changed(const DsoLocator& locator) const;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_DSO_LOOKUP_H_
