// ProcMapsParser: /proc/PID/maps and /proc/PID/smaps.
//
//   55d7d2a69000-55d7d2a98000 r--p 00000000 fe:00 247101     /usr/bin/bash
//   Size:                188 kB        <- smaps only: one "Key: value" per line
//   ...
//   VmFlags: rd mr mw me
//
// The line format is fs/proc/task_mmu.c show_map_vma(): "%08lx-%08lx %c%c%c%c
// %08llx %02x:%02x %lu " then the padded path; the end is exclusive. Region:
// protect = the perms ("r-xp"), usage = the path / [heap] / [stack] (may
// contain spaces, e.g. " (deleted)"), no type/state. smaps "Key: value" lines
// make the format "smaps"; their Size: is checked against the range (a
// mismatch is an error). Each entry's "Rss: N kB" is its region's rss: more
// than the range, a second Rss: in one entry, or an entry without one when
// others have one is an error; an smaps without any Rss: line (and a maps
// file) leaves rss unset. Other lines are counted as skipped; a line that
// starts like "hex-hex" but does not parse is an error.
#ifndef PAGEBLAME_REGIONS_PROC_MAPS_PARSER_H_
#define PAGEBLAME_REGIONS_PROC_MAPS_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

class ProcMapsParser {
 public:
  // "start-end perms offset dev inode [path]".
  static bool LooksLikeRow(absl::string_view line);

  static absl::StatusOr<RegionTable> Parse(const TextLines& text);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_PROC_MAPS_PARSER_H_
