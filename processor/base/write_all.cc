#include "processor/base/write_all.h"

#include <unistd.h>

#include <cerrno>

namespace pageblame {

int WriteAll(int fd, std::string_view bytes, off_t at) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = at < 0 ? ::write(fd, bytes.data() + done, bytes.size() - done)
                             : ::pwrite(fd, bytes.data() + done, bytes.size() - done, at + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace pageblame
