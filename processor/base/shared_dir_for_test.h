// For tests of the side-file rule (side_file_trust.h): a temporary directory
// anyone can write, sticky like /tmp (mode 01777), and files in it with a
// chosen owner and mode. Choosing an owner needs root: tests GTEST_SKIP
// without it (IsRoot()).
//
//   SharedDirForTest dir;                          // /tmp/pb_shared_XXXXXX, 01777
//   std::string map = dir.Write("perf-42.map", "1000 10 f\n", kNobody, 0644);
#ifndef PAGEBLAME_BASE_SHARED_DIR_FOR_TEST_H_
#define PAGEBLAME_BASE_SHARED_DIR_FOR_TEST_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame {

// Debian's `nobody`: a user that is neither root nor the one running tests.
inline constexpr uid_t kNobody = 65534;

inline bool IsRoot() { return ::geteuid() == 0; }

class SharedDirForTest {
 public:
  SharedDirForTest() : dir_("pb_shared") {
    // mkdtemp makes 0700; the sticky bit as /tmp has it.
    if (::chmod(dir_.path().c_str(), 01777) != 0) ADD_FAILURE() << "chmod " << dir_.path();
  }
  const std::string& path() const { return dir_.path(); }

  // Writes `text` to NAME in the directory, owned by `uid` (and its group
  // `uid`), with `mode`; returns the path.
  std::string Write(std::string_view name, std::string_view text, uid_t uid, mode_t mode) const {
    const std::string file = dir_.path() + "/" + std::string(name);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    if (::chown(file.c_str(), uid, uid) != 0) ADD_FAILURE() << "chown " << file << ": " << std::strerror(errno);
    // After chown, which clears set-id bits and nothing else: the mode asked.
    if (::chmod(file.c_str(), mode) != 0) ADD_FAILURE() << "chmod " << file << ": " << std::strerror(errno);
    return file;
  }

 private:
  TempDir dir_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_SHARED_DIR_FOR_TEST_H_
