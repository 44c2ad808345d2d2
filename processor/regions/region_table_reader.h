// RegionTableReader: reads a region table in any supported format, detecting
// the format from the content (never from the file name).
//
//   ASSIGN_OR_RETURN(RegionTable t, RegionTableReader::DetectAndParse("address.output"));
//   // t.format == "windbg-address", t.regions[0].line == 3, ...
//   ASSIGN_OR_RETURN(RegionTable u, RegionTableReader::ParseString("0x1000-0x3000\n", "test"));
//
// Detection rule: lines are examined in order and the FIRST non-blank line
// that matches one of these signatures decides the format (checked in this
// order for each line):
//   1. WinDbg header  "BaseAddress EndAddress+1 ..." (or BaseAddr EndAddr+1) -> windbg-address
//   2. SOS header     "| ... | StartAddr | ... |"                            -> sos-maddress
//   2b. SOS eeheap    "Loader Heap:", "Number of GC Heaps:", a heap line     -> sos-eeheap
//   3. page-diff line "Memory regions found by ..." or "A - B Size: ..."     -> page-diff
//   4. pmap header    "Address Perm ..." / "Address Kbytes ..."               -> pmap
//   5. maps line      "start-end perms offset maj:min inode ..."             -> maps/smaps
//   6. pmap row       "addr perms offset maj:min inode size ..." (pmap -q)    -> pmap
//   7. WinDbg row     "[+] base end size" with a backtick or a MEM_ word      -> windbg-address
//   8. list entry     one address, or two separated by '-' ',' or blanks      -> ranges
// Lines matching none (debugger prompts, pmap's "PID: command" line, the SOS
// top border, '#' comments) are passed over. An empty file or a binary file
// is an error. When no line matches, every parser is tried and the one that
// failed furthest into the file, on a line that starts with an address,
// explains what is wrong ("t:4: expected 'START-END PERMS ...', got '...'
// (the closest format, maps: ...)"); if none did, the error lists the
// formats and quotes the first non-blank line.
//
// Before detection (ParseString, DetectAndParse): a file starting with the
// ELF magic is read as an ELF core file (CoreFileParser: format "elf-core";
// DetectAndParse reads only its headers and notes); text in UTF-16LE/BE or
// UTF-8 with a byte-order mark is decoded to UTF-8 (TextEncoding).
// DetectAndParse refuses a directory ("PATH: is a directory").
#ifndef PAGEBLAME_REGIONS_REGION_TABLE_READER_H_
#define PAGEBLAME_REGIONS_REGION_TABLE_READER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

enum class RegionFormat {
  kWindbgAddress, kSosMaddress, kSosEeheap, kPageDiff, kPmap, kProcMaps, kRangeList
};

class RegionTableReader {
 public:
  // The format by the rule above, with the line that decided it in *line.
  static absl::StatusOr<RegionFormat> Detect(const TextLines& text, int* line = nullptr);

  // Parses `text` as `format`, skipping detection (for a --format override).
  static absl::StatusOr<RegionTable> ParseAs(RegionFormat format, const TextLines& text);

  // Detect + ParseAs.
  static absl::StatusOr<RegionTable> Parse(const TextLines& text);
  // Same on an in-memory string (an ELF core, or text in any encoding above);
  // `name` prefixes error messages.
  static absl::StatusOr<RegionTable> ParseString(std::string text, std::string name);
  // Same on a file (or a pipe, for text); errors are prefixed with `path` as
  // given.
  static absl::StatusOr<RegionTable> DetectAndParse(const std::string& path);

  static absl::string_view FormatName(RegionFormat format);

 private:
  // The best line-numbered reason a parser gives for `text`, which no
  // detection signature matched (see above).
  static absl::Status ClosestError(const TextLines& text, int first_nonblank);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_REGION_TABLE_READER_H_
