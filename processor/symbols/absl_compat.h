// Debian 12's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so
// absl::string_view is its own type and std::string_view does not convert to
// it. The symbols/ API speaks std::string_view; this is the one bridge.
//
//   absl::StartsWith(ToAbsl(path), "/")
#ifndef PAGEBLAME_SYMBOLS_ABSL_COMPAT_H_
#define PAGEBLAME_SYMBOLS_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace pageblame::symbols {

inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_ABSL_COMPAT_H_
