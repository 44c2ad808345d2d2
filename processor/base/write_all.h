// WriteAll: every byte of a buffer to a descriptor, through short writes and
// EINTR, at the end (at < 0: write) or at an offset (pwrite).
//
//   if (const int err = WriteAll(fd, bytes, -1); err != 0) ... strerror(err)
#ifndef PAGEBLAME_BASE_WRITE_ALL_H_
#define PAGEBLAME_BASE_WRITE_ALL_H_

#include <sys/types.h>

#include <string_view>

namespace pageblame {

// 0, or the errno of the write that failed (EIO for one that wrote nothing).
int WriteAll(int fd, std::string_view bytes, off_t at);

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_WRITE_ALL_H_
