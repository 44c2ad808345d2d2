// TextEncoding: turns the bytes of a saved region table into UTF-8 text
// before any format is detected.
//
//   ASSIGN_OR_RETURN(std::string text, TextEncoding::ToUtf8(std::move(bytes), "address.txt"));
//
// Why: most Windows users save WinDbg output from PowerShell
// (`!address > address.txt`, or `Out-File`), which writes UTF-16LE with a
// byte-order mark; a UTF-16 file is full of NUL bytes and would otherwise be
// taken for a binary file. The byte-order mark decides:
//   EF BB BF  UTF-8 (the mark is dropped)
//   FF FE     UTF-16LE          FE FF  UTF-16BE
//   none      the bytes are returned unchanged (UTF-8 or ASCII assumed)
// UTF-16 is decoded to UTF-8 with surrogate pairs joined. An odd byte count
// or an unpaired surrogate is an error "NAME:LINE: ..." (line counted in the
// decoded text), since a half-decoded table could hide rows.
//
// Without a mark nothing is guessed; LooksLikeUtf16WithoutBom() lets an error
// message suggest the conversion instead.
#ifndef PAGEBLAME_REGIONS_TEXT_ENCODING_H_
#define PAGEBLAME_REGIONS_TEXT_ENCODING_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame::regions {

class TextEncoding {
 public:
  // See above. `name` prefixes error messages. Linear in the size.
  static absl::StatusOr<std::string> ToUtf8(std::string bytes, absl::string_view name);

  // True if `bytes` has no mark but its start is ASCII text stored as UTF-16
  // (every other byte NUL): what an editor's "UTF-16 without BOM" writes.
  static bool LooksLikeUtf16WithoutBom(absl::string_view bytes);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_TEXT_ENCODING_H_
