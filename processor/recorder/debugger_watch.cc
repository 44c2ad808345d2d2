#include "processor/recorder/debugger_watch.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "processor/recorder/recorded_processes.h"

namespace pageblame::recorder {
namespace {

// Programs that attach to a process they are given by pid.
constexpr const char* kDebuggers[] = {"gdb", "lldb", "strace", "ltrace", "gcore", "dotnet-dump", "procdump"};

// True if an argument names `pid`: "123", "-p123", "--pid=123".
bool NamesPid(const std::string& cmdline, pid_t pid) {
  const std::string want = absl::StrCat(pid);
  for (absl::string_view arg : absl::StrSplit(cmdline, '\0', absl::SkipEmpty())) {
    if (!absl::EndsWith(arg, want)) continue;
    arg.remove_suffix(want.size());
    if (arg.empty() || arg == "-p" || absl::EndsWith(arg, "=")) return true;
  }
  return false;
}

// The connector's subscription message: a netlink header, a cn_msg, and
// the op it carries (laid out by hand: cn_msg ends in a flexible array).
std::string ListenRequest() {
  const proc_cn_mcast_op op = PROC_CN_MCAST_LISTEN;
  nlmsghdr header = {};
  header.nlmsg_len = NLMSG_LENGTH(sizeof(cn_msg) + sizeof op);
  header.nlmsg_type = NLMSG_DONE;
  cn_msg message = {};
  message.id.idx = CN_IDX_PROC;
  message.id.val = CN_VAL_PROC;
  message.len = sizeof op;
  std::string out(NLMSG_SPACE(sizeof(cn_msg) + sizeof op), '\0');
  std::memcpy(out.data(), &header, sizeof header);
  std::memcpy(out.data() + NLMSG_HDRLEN, &message, sizeof message);
  std::memcpy(out.data() + NLMSG_HDRLEN + sizeof message, &op, sizeof op);
  return out;
}

// False once `pid` has ended: gone, or a zombie (a child of the command
// that ended waits to be reaped).
bool Alive(pid_t pid) {
  const std::optional<ProcessRow> row = ParseStat(ReadSmallFile(absl::StrCat("/proc/", pid, "/stat")));
  return row.has_value() && row->state != 'Z';
}

}  // namespace

std::unique_ptr<DebuggerWatch> DebuggerWatch::Open(pid_t command) {
  const int fd = ::socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
  if (fd < 0) return nullptr;
  sockaddr_nl addr = {};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = CN_IDX_PROC;
  addr.nl_pid = 0;  // the kernel picks a port
  const std::string req = ListenRequest();
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::send(fd, req.data(), req.size(), 0) < 0) {
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<DebuggerWatch>(new DebuggerWatch(fd, command));
}

DebuggerWatch::~DebuggerWatch() { ::close(fd_); }

bool DebuggerWatch::IsDebuggerOf(pid_t pid, pid_t command, std::string* name) {
  const std::string comm(absl::StripTrailingAsciiWhitespace(ReadSmallFile(absl::StrCat("/proc/", pid, "/comm"))));
  if (comm.empty()) return false;
  *name = absl::StrCat(comm, " (pid ", pid, ")");
  if (comm == "createdump") {
    const std::optional<ProcessRow> row = ParseStat(ReadSmallFile(absl::StrCat("/proc/", pid, "/stat")));
    return row.has_value() && row->ppid == static_cast<uint32_t>(command);
  }
  if (std::find(std::begin(kDebuggers), std::end(kDebuggers), comm) == std::end(kDebuggers)) return false;
  return NamesPid(ReadSmallFile(absl::StrCat("/proc/", pid, "/cmdline")), command);
}

std::vector<pid_t> DebuggerWatch::Execs() {
  std::vector<pid_t> out;
  alignas(nlmsghdr) char buf[8192];
  for (;;) {
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got < 0 && errno == EINTR) continue;
    // EAGAIN: all read. ENOBUFS: events were dropped (a burst of execs);
    // the ones after still come.
    if (got < 0 && errno == ENOBUFS) continue;
    if (got <= 0) return out;
    // The messages in order, each checked to lie within what was read
    // (NLMSG_OK's own checks mix signed and unsigned lengths).
    size_t left = static_cast<size_t>(got);
    for (const char* at = buf; left >= sizeof(nlmsghdr);) {
      const auto* h = reinterpret_cast<const nlmsghdr*>(at);
      if (h->nlmsg_len < sizeof(nlmsghdr) || h->nlmsg_len > left) break;
      if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_event))) {
        const auto* msg = static_cast<const cn_msg*>(NLMSG_DATA(h));
        const auto* ev = reinterpret_cast<const proc_event*>(msg->data);
        if (msg->len >= sizeof(proc_event) && ev->what == proc_event::PROC_EVENT_EXEC) {
          out.push_back(ev->event_data.exec.process_tgid);
        }
      }
      const size_t step = NLMSG_ALIGN(h->nlmsg_len);
      if (step >= left) break;
      at += step;
      left -= step;
    }
  }
}

std::vector<DebuggerWatch::Debugger> DebuggerWatch::Started() {
  std::vector<Debugger> out;
  for (pid_t pid : Execs()) {
    Debugger d{pid, ""};
    if (IsDebuggerOf(pid, command_, &d.name)) {
      active_.push_back(pid);
      out.push_back(d);
    }
  }
  return out;
}

bool DebuggerWatch::Works() {
  std::unique_ptr<DebuggerWatch> watch = Open(::getpid());
  if (watch == nullptr) return false;
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl("/bin/true", "true", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (child < 0) return false;
  bool seen = false;
  for (int waited = 0; !seen && waited < 2000; waited += 10) {
    pollfd p = {watch->fd(), POLLIN, 0};
    ::poll(&p, 1, 10);
    for (pid_t pid : watch->Execs()) seen = seen || pid == child;
  }
  ::waitpid(child, nullptr, 0);
  return seen;
}

bool DebuggerWatch::AllGone() {
  active_.erase(std::remove_if(active_.begin(), active_.end(), [](pid_t p) { return !Alive(p); }), active_.end());
  return active_.empty();
}

}  // namespace pageblame::recorder
