// Address parsing shared by every region-table parser and the CLI.
//
// Accepted spellings of one 64-bit address (case-insensitive hex):
//   0x7d1898000000   7d1898000000   7d18`98000000   0x7d18`98000000
// The WinDbg form splits the value with one backtick; WinDbg always prints
// exactly 8 digits after it, and we require that, because "7d18`9800" could
// mean either 0x7d1800009800 or a typo. At most 16 significant digits.
//
//   ASSIGN_OR_RETURN(uint64_t a, ParseAddress("7d18`98000000"));  // 0x7d1898000000
#ifndef PAGEBLAME_REGIONS_ADDRESS_H_
#define PAGEBLAME_REGIONS_ADDRESS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame::regions {

// InvalidArgument (naming the text and the problem) unless `text` is exactly
// one address in a form above, with no surrounding whitespace.
absl::StatusOr<uint64_t> ParseAddress(absl::string_view text);

// True if ParseAddress(text) would succeed.
bool IsAddress(absl::string_view text);

// "0x7d1898000000": how reports print addresses.
std::string FormatAddress(uint64_t address);

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_ADDRESS_H_
