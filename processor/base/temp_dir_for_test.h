// For tests that write files: a fresh directory under $TMPDIR (or /tmp),
// removed with everything in it when the TempDir goes (symlinks are removed,
// never what they point to).
//
//   TempDir dir("pb_symbols");   // /tmp/pb_symbols_XXXXXX
//   WriteSomething(dir.path() + "/x");
#ifndef PAGEBLAME_BASE_TEMP_DIR_FOR_TEST_H_
#define PAGEBLAME_BASE_TEMP_DIR_FOR_TEST_H_

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace pageblame {

// Where tests make their files and directories: a mkstemp/mkdtemp pattern
// under $TMPDIR (or /tmp), "<dir>/<prefix>_XXXXXX".
inline std::string TestTempPattern(std::string_view prefix) {
  const char* base = std::getenv("TMPDIR");
  return std::string(base && *base ? base : "/tmp") + "/" + std::string(prefix) + "_XXXXXX";
}

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "pageblame-test") {
    std::string pattern = TestTempPattern(prefix);
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_TEMP_DIR_FOR_TEST_H_
