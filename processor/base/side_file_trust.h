// Whether a side file pageblame found by name may decide an answer: the one
// rule for every file looked up in a place other users can write to
// (perf-PID.map now; jit-PID.dump and the runtime tables `record` writes
// when they are read).
//
// Any local user can create /tmp/perf-PID.map for someone else's pid, and
// the frames it names would then say who is to blame. So, as perf does for
// its /tmp/perf-PID.map (dso__load() in tools/perf/util/symbol.c: "not owned
// by current user or root, ignoring it (use -f to override)"), a file in a
// shared directory (one others can write: world-writable, like /tmp or
// /dev/shm, or group-writable, like a team's directory) is used only when it is owned by root or by the user running
// pageblame (geteuid), and, unlike perf, only when neither its group nor
// others may write it (else anyone could have rewritten it since). Files in
// other directories (beside a trace the user keeps in a directory of their
// own, a --perf-map-dir that is not world-writable) are the user's choice.
// `force` (-f/--force, perf's flag) trusts every file.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<InputFile> f,
//                    OpenSideFile("/tmp/perf-1234.map", "perf map", /*force=*/false));
//   // PermissionDenied "/tmp/perf-1234.map: owned by nobody (uid 65534), not by
//   // root or the user running pageblame (root), in a directory others can write:
//   // ignored (use -f to override)" when the rule refuses it.
//
// The owner and mode are those of the open descriptor (fstat), so the file
// judged is the file read: renaming another file into place between the
// check and the read changes nothing.
#ifndef PAGEBLAME_BASE_SIDE_FILE_TRUST_H_
#define PAGEBLAME_BASE_SIDE_FILE_TRUST_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/base/input_file.h"

namespace pageblame {

// Whether the directory holding `path` is one others can write to
// (S_IWOTH or S_IWGRP). A directory that cannot be examined counts as shared.
bool InSharedDirectory(const std::string& path);

// OK if the open file `fd` (read from `path`, named in the message) is owned
// by root or geteuid() and writable by neither group nor others; otherwise
// PermissionDenied naming the file, its owner (user name, else uid) or its
// mode, and the override.
absl::Status TrustedInSharedDir(int fd, const std::string& path);

// InputFile::Open(path, what, kRegular), then, unless `force` or the file's
// directory is not shared, TrustedInSharedDir on its descriptor.
absl::StatusOr<std::unique_ptr<InputFile>> OpenSideFile(const std::string& path, absl::string_view what,
                                                        bool force);

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_SIDE_FILE_TRUST_H_
