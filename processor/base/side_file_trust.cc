#include "processor/base/side_file_trust.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pageblame {
namespace {

// "nobody (uid 65534)", or "uid 65534" when no user has that id.
std::string Owner(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return absl::StrCat(found->pw_name, " (uid ", uid, ")");
  }
  return absl::StrCat("uid ", uid);
}

std::string DirectoryOfPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

constexpr char kIgnored[] = ", in a directory others can write: ignored (use -f to override)";

}  // namespace

bool InSharedDirectory(const std::string& path) {
  struct stat st;
  if (::stat(DirectoryOfPath(path).c_str(), &st) != 0) return true;
  // A group that may write is as many users as the group has.
  return (st.st_mode & (S_IWOTH | S_IWGRP)) != 0;
}

absl::Status TrustedInSharedDir(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != me) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": owned by ", Owner(st.st_uid),
                                                    ", not by root or the user running pageblame (",
                                                    Owner(me), ")", kIgnored));
  }
  // Its owner is trusted, but a file others may write says what they wrote.
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return absl::PermissionDeniedError(absl::StrCat(path, ": writable by its group or others (mode ", mode,
                                                    ", owner ", Owner(st.st_uid), ")", kIgnored));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<InputFile>> OpenSideFile(const std::string& path, absl::string_view what,
                                                        bool force) {
  absl::StatusOr<std::unique_ptr<InputFile>> f = InputFile::Open(path, what, InputFile::Accept::kRegular);
  if (!f.ok() || force || !InSharedDirectory(path)) return f;
  absl::Status trusted = TrustedInSharedDir((*f)->fd(), path);
  if (!trusted.ok()) return trusted;
  return f;
}

}  // namespace pageblame
