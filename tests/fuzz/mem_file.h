// For fuzz targets whose reader takes a path (perf.data files are mapped,
// ELF files are opened by libelf): the input as an anonymous in-memory file,
// named by /proc/self/fd/N, gone when the object is.
//
//   MemFile f(data, size);
//   auto trace = replay::LoadTrace({.path = f.path()});
#ifndef PAGEBLAME_TESTS_FUZZ_MEM_FILE_H_
#define PAGEBLAME_TESTS_FUZZ_MEM_FILE_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace pageblame::fuzz {

class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) : fd_(memfd_create("fuzz-input", 0)) {
    if (fd_ < 0) std::abort();  // no input to test: a broken setup, not a finding
    for (size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace pageblame::fuzz

#endif  // PAGEBLAME_TESTS_FUZZ_MEM_FILE_H_
