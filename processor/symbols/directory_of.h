// The directory part of a path, as dirname(1) gives it: the trace's
// directory is where perf-PID.map files and copied binaries are looked for.
#ifndef PAGEBLAME_SYMBOLS_DIRECTORY_OF_H_
#define PAGEBLAME_SYMBOLS_DIRECTORY_OF_H_

#include <string>
#include <string_view>

namespace pageblame::symbols {

inline std::string DirectoryOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_DIRECTORY_OF_H_
