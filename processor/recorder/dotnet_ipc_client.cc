#include "processor/recorder/dotnet_ipc_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace pageblame::recorder {
namespace {

constexpr char kMagic[] = "DOTNET_IPC_V1";  // 14 bytes with its NUL
constexpr size_t kMagicSize = sizeof(kMagic);
static_assert(kMagicSize == 14);
// Replies to these commands are a header and one HRESULT; anything much
// longer is not the runtime talking.
constexpr size_t kMaxReply = 4096;

void PutU16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xFF));
  out->push_back(static_cast<char>(v >> 8));
}

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint16_t GetU16(absl::string_view s, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(s[at]) | (static_cast<uint8_t>(s[at + 1]) << 8));
}

uint32_t GetU32(absl::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

// The runtime's names for its diagnostics HRESULTs (ds-protocol.h).
std::string HresultName(uint32_t hr) {
  switch (hr) {
    case 0x80131384: return "0x80131384 (bad encoding)";
    case 0x80131385: return "0x80131385 (unknown command: a runtime before .NET 8)";
    case 0x80131386: return "0x80131386 (unknown magic)";
    case 0x80131515: return "0x80131515 (not supported)";
    case 0x80004005: return "0x80004005 (failed)";
  }
  return absl::StrFormat("0x%08x", hr);
}

// A directory from the target's environment at exec (NAME=/abs/path), or
// /tmp.
std::string DirFromEnvironment(uint32_t pid, const std::string& proc, absl::string_view name) {
  std::ifstream f(absl::StrCat(proc, "/", pid, "/environ"), std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  for (absl::string_view var : absl::StrSplit(ss.str(), '\0')) {
    if (absl::ConsumePrefix(&var, name) && absl::ConsumePrefix(&var, "=") && absl::StartsWith(var, "/")) {
      return std::string(var);
    }
  }
  return "/tmp";
}

std::string TmpDirOf(uint32_t pid, const std::string& proc) { return DirFromEnvironment(pid, proc, "TMPDIR"); }

// The owner of /proc/PID: the process's effective uid (root's for a process
// that is not dumpable), as its files are made with.
std::optional<uid_t> OwnerOf(uint32_t pid, const std::string& proc) {
  struct stat st;
  if (::stat(absl::StrCat(proc, "/", pid).c_str(), &st) != 0) return std::nullopt;
  return st.st_uid;
}

uint64_t Nanos(const struct timespec& t) {
  return static_cast<uint64_t>(t.tv_sec) * 1000000000 + static_cast<uint64_t>(t.tv_nsec);
}

// Reads exactly `n` bytes, or says why not (the peer closed early, a
// timeout, an error).
absl::Status ReadFull(int fd, char* out, size_t n, int timeout_ms) {
  size_t got = 0;
  while (got < n) {
    pollfd p = {fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return absl::DeadlineExceededError(absl::StrCat("no reply after ", timeout_ms, " ms"));
    if (ready < 0) return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::UnavailableError(absl::StrCat("recv: ", std::strerror(errno)));
    if (r == 0) return absl::DataLossError(absl::StrCat("the reply ends after ", got, " of ", n, " bytes"));
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

absl::Status WriteFull(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t w = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    sent += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

// Closes the descriptor when it goes.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::string> DotnetIpcClient::SocketOf(uint32_t pid, const std::string& proc) {
  const std::string dir = absl::StrCat(proc, "/", pid, "/root", TmpDirOf(pid, proc));
  const std::string prefix = absl::StrCat("dotnet-diagnostic-", pid, "-");
  std::string best;
  std::filesystem::file_time_type best_time;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, prefix) || !absl::EndsWith(name, "-socket")) continue;
    std::error_code type_ec, time_ec;
    if (!entry.is_socket(type_ec)) continue;
    const auto when = entry.last_write_time(time_ec);
    if (time_ec) continue;
    if (best.empty() || when > best_time) {
      best = entry.path().string();
      best_time = when;
    }
  }
  if (best.empty()) {
    return absl::NotFoundError(absl::StrCat("no diagnostics socket ", dir, "/", prefix, "*-socket",
                                            ec ? absl::StrCat(" (", ec.message(), ")") : ""));
  }
  return best;
}

std::string DotnetIpcClient::PerfMapOf(uint32_t pid, const std::string& proc) {
  // src/coreclr/vm/perfmap.cpp: $DOTNET_PerfMapJitDumpPath, else /tmp.
  std::string dir = DirFromEnvironment(pid, proc, "DOTNET_PerfMapJitDumpPath");
  if (dir == "/tmp") dir = DirFromEnvironment(pid, proc, "COMPlus_PerfMapJitDumpPath");
  return absl::StrCat(proc, "/", pid, "/root", dir, "/perf-", pid, ".map");
}

absl::StatusOr<std::string> DotnetIpcClient::PerfMapWritten(uint32_t pid, uint64_t since_ns, int timeout_ms,
                                                            const std::string& proc) {
  const std::string path = PerfMapOf(pid, proc);
  const std::optional<uid_t> owner = OwnerOf(pid, proc);
  std::string seen = "no such file";
  for (int waited = 0;; waited += 50) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode)) {
        seen = "not a regular file";
      } else if (!owner || (st.st_uid != *owner && st.st_uid != 0)) {
        seen = absl::StrCat("owned by uid ", st.st_uid, ", not by the process's");
      } else if (Nanos(st.st_mtim) + 1000000000 < since_ns) {  // file times are coarse: a second of slack
        seen = "not written since the request";
      } else {
        return path;
      }
    }
    if (waited >= timeout_ms) break;
    ::usleep(50000);
  }
  return absl::NotFoundError(absl::StrCat(path, ": ", seen, " after ", timeout_ms, " ms"));
}

std::string DotnetIpcClient::EncodeRequest(uint8_t command_set, uint8_t command_id, absl::string_view payload) {
  std::string out(kMagic, kMagicSize);
  PutU16(&out, static_cast<uint16_t>(kHeaderSize + payload.size()));
  out.push_back(static_cast<char>(command_set));
  out.push_back(static_cast<char>(command_id));
  PutU16(&out, 0);
  out.append(payload.data(), payload.size());
  return out;
}

absl::Status DotnetIpcClient::CheckReply(absl::string_view reply) {
  if (reply.size() < kHeaderSize) {
    return absl::DataLossError(absl::StrCat("a reply of ", reply.size(), " bytes, shorter than its header (",
                                            kHeaderSize, ")"));
  }
  if (reply.substr(0, kMagicSize) != absl::string_view(kMagic, kMagicSize)) {
    return absl::DataLossError("the reply does not start with DOTNET_IPC_V1");
  }
  const uint16_t size = GetU16(reply, kMagicSize);
  if (size != reply.size()) {
    return absl::DataLossError(absl::StrCat("the reply's header says ", size, " bytes, it has ", reply.size()));
  }
  const uint8_t set = static_cast<uint8_t>(reply[16]);
  const uint8_t id = static_cast<uint8_t>(reply[17]);
  if (set != kServerCommandSet || (id != kResponseOk && id != kResponseError)) {
    return absl::DataLossError(absl::StrFormat("a reply with command 0x%02x%02x, expected 0xff00 or 0xffff", set, id));
  }
  if (reply.size() < kHeaderSize + 4) {
    return absl::DataLossError(absl::StrCat("a reply of ", reply.size(), " bytes has no HRESULT"));
  }
  const uint32_t hr = GetU32(reply, kHeaderSize);
  if (id == kResponseError) return absl::FailedPreconditionError(absl::StrCat("the runtime answered error ", HresultName(hr)));
  if (hr != 0) return absl::FailedPreconditionError(absl::StrCat("the runtime answered HRESULT ", HresultName(hr)));
  return absl::OkStatus();
}

absl::StatusOr<std::string> DotnetIpcClient::Exchange(const std::string& request) const {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat(socket_path_, ": longer than a socket address can be"));
  }
  std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  timeval tv = {timeout_ms_ / 1000, (timeout_ms_ % 1000) * 1000};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return absl::UnavailableError(absl::StrCat("connect ", socket_path_, ": ", std::strerror(errno)));
  }
  if (absl::Status s = CheckPeer(fd.get()); !s.ok()) return s;
  if (absl::Status s = WriteFull(fd.get(), request); !s.ok()) return s;
  std::string reply(kHeaderSize, '\0');
  if (absl::Status s = ReadFull(fd.get(), reply.data(), kHeaderSize, timeout_ms_); !s.ok()) return s;
  // The header says how long the whole reply is; read the rest of it.
  const uint16_t size = GetU16(reply, kMagicSize);
  if (size < kHeaderSize || size > kMaxReply) {
    return absl::DataLossError(absl::StrCat("the reply's header says ", size, " bytes (expected ", kHeaderSize,
                                            " to ", kMaxReply, ")"));
  }
  reply.resize(size);
  if (absl::Status s = ReadFull(fd.get(), reply.data() + kHeaderSize, size - kHeaderSize, timeout_ms_); !s.ok()) {
    return s;
  }
  return reply;
}

absl::Status DotnetIpcClient::CheckPeer(int fd) const {
  if (peer_ == 0) return absl::OkStatus();
  ucred cred = {};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("cannot tell who serves it: ", std::strerror(errno)));
  }
  if (cred.pid != static_cast<pid_t>(peer_)) {
    return absl::PermissionDeniedError(absl::StrCat("served by pid ", cred.pid, " (uid ", cred.uid, "), not by pid ",
                                                    peer_, ": not its runtime's diagnostics server"));
  }
  return absl::OkStatus();
}

absl::Status DotnetIpcClient::Command(uint8_t command_id, absl::string_view payload) const {
  absl::StatusOr<std::string> reply = Exchange(EncodeRequest(kProcessCommandSet, command_id, payload));
  absl::Status s = reply.ok() ? CheckReply(*reply) : reply.status();
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(socket_path_, ": ", s.message()));
}

absl::Status DotnetIpcClient::EnablePerfMap(PerfMapType type) const {
  std::string payload;
  PutU32(&payload, static_cast<uint32_t>(type));
  return Command(kEnablePerfMap, payload);
}

absl::Status DotnetIpcClient::DisablePerfMap() const { return Command(kDisablePerfMap, ""); }

}  // namespace pageblame::recorder
