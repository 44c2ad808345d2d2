#include "processor/cli/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pageblame::cli {
namespace {

// Reads both pipes until both are closed.
absl::Status Drain(int out_fd, int err_fd, std::string* out, std::string* err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {out, err};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      if (sinks[i]->size() + n > ChildProcess::kMaxOutput) {
        for (pollfd& f : fds)
          if (f.fd >= 0) close(f.fd);
        return absl::ResourceExhaustedError(
            absl::StrCat("the child printed more than ", ChildProcess::kMaxOutput >> 20, " MiB"));
      }
      sinks[i]->append(buf, static_cast<size_t>(n));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ChildProcess::FindInPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

absl::StatusOr<ChildProcess::Result> ChildProcess::Run(const std::vector<std::string>& argv) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execvp(args[0], args.data());
    const std::string msg = absl::StrCat("cannot run ", argv[0], ": ", std::strerror(errno), "\n");
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (child < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  Result r;
  absl::Status drained = Drain(out_pipe[0], err_pipe[0], &r.out, &r.err);
  if (!drained.ok()) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!drained.ok()) return absl::InternalError(absl::StrCat(argv[0], ": ", drained.message()));
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace pageblame::cli
