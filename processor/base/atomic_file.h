// WriteFileAtomically: a file pageblame writes for itself beside an input
// (the recording's index), whole or not at all: the bytes go to a new
// temporary file in the same directory (O_EXCL, `mode`), which is then
// renamed over `path`. A reader sees the old file or the new one, never
// half of one; a link at `path` is replaced, never followed; a failure
// leaves `path` as it was and removes the temporary file.
//
//   RETURN_IF_ERROR(WriteFileAtomically("app.data.index", bytes, 0600));
#ifndef PAGEBLAME_BASE_ATOMIC_FILE_H_
#define PAGEBLAME_BASE_ATOMIC_FILE_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace pageblame {

// Errors name the file and the reason (an unwritable directory: PermissionDenied).
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode);

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_ATOMIC_FILE_H_
