// For tests that need bytes in a real file (readers that map or pread it):
// a temporary file holding `bytes` (where TempDir makes its directories),
// removed when the TempFile goes.
//
//   TempFile f(bytes);
//   auto file = MappedFile::Open(f.path());
#ifndef PAGEBLAME_BASE_TEMP_FILE_FOR_TEST_H_
#define PAGEBLAME_BASE_TEMP_FILE_FOR_TEST_H_

#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame {

class TempFile {
 public:
  explicit TempFile(std::string_view bytes) {
    path_ = TestTempPattern("pageblame-test");
    int fd = mkstemp(path_.data());
    EXPECT_GE(fd, 0) << "mkstemp " << path_;
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_TEMP_FILE_FOR_TEST_H_
