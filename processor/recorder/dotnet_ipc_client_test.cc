// DotnetIpcClient against a fake diagnostics server: a Unix socket in a
// temporary directory, served by a thread that reads one request and sends a
// scripted reply (a good one, an error, a short one, a wrong one, none), and
// SocketOf on a fake /proc tree.
#include "processor/recorder/dotnet_ipc_client.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame::recorder {
namespace {

using ::testing::HasSubstr;
using Type = DotnetIpcClient::PerfMapType;

// A listening Unix socket at `path`; -1 on failure.
int Listen(const std::string& path) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return -1;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A reply as the runtime builds it: header, then the HRESULT.
std::string Reply(uint8_t id, uint32_t hresult) {
  std::string r = DotnetIpcClient::EncodeRequest(0xFF, id, std::string(4, '\0'));
  std::memcpy(r.data() + DotnetIpcClient::kHeaderSize, &hresult, 4);
  return r;
}

// Serves one connection: reads the request (header, then as many payload
// bytes as the header says), sends `reply`, closes; unless `silent`, which
// holds the connection open without answering until the test ends.
class FakeServer {
 public:
  FakeServer(const std::string& path, std::string reply, bool silent = false)
      : fd_(Listen(path)), reply_(std::move(reply)), silent_(silent) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  const std::string& request() const { return request_; }

 private:
  void Serve() {
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char buf[256];
    size_t want = DotnetIpcClient::kHeaderSize;
    while (request_.size() < want) {
      const ssize_t r = ::recv(c, buf, sizeof(buf), 0);
      if (r <= 0) break;
      request_.append(buf, r);
      if (request_.size() >= 16) want = static_cast<uint8_t>(request_[14]) | (static_cast<uint8_t>(request_[15]) << 8);
    }
    if (silent_) {
      char b;
      ::recv(c, &b, 1, 0);  // until the client gives up and closes
    } else {
      ::send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
    }
    ::close(c);
  }

  int fd_;
  std::string reply_;
  bool silent_;
  std::string request_;
  std::thread thread_;
};

class DotnetIpcClientTest : public ::testing::Test {
 protected:
  std::string SocketPath() const { return dir_.path() + "/s"; }
  TempDir dir_{"pb_dotnet_ipc"};
};

TEST_F(DotnetIpcClientTest, EnableSendsTheProtocolsBytesAndTakesOk) {
  std::string request;
  {
    FakeServer server(SocketPath(), Reply(0x00, 0));
    ASSERT_TRUE(server.ok());
    EXPECT_TRUE(DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll).ok());
    request = server.request();
  }
  // "DOTNET_IPC_V1\0", size 24, Process (0x04) EnablePerfMap (0x05), reserved, type 1.
  const std::string expected("DOTNET_IPC_V1\0\x18\x00\x04\x05\x00\x00\x01\x00\x00\x00", 24);
  EXPECT_EQ(request, expected);
}

TEST_F(DotnetIpcClientTest, DisableHasNoPayload) {
  std::string request;
  {
    FakeServer server(SocketPath(), Reply(0x00, 0));
    EXPECT_TRUE(DotnetIpcClient(SocketPath()).DisablePerfMap().ok());
    request = server.request();
  }
  EXPECT_EQ(request, std::string("DOTNET_IPC_V1\0\x14\x00\x04\x06\x00\x00", 20));
}

TEST_F(DotnetIpcClientTest, AnErrorReplyNamesItsHresult) {
  FakeServer server(SocketPath(), Reply(0xFF, 0x80131385));
  absl::Status s = DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("0x80131385 (unknown command: a runtime before .NET 8)"));
  EXPECT_THAT(s.message(), HasSubstr(SocketPath()));
}

TEST_F(DotnetIpcClientTest, AnOkReplyWithAFailingHresultIsAnError) {
  FakeServer server(SocketPath(), Reply(0x00, 0x80004005));
  absl::Status s = DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("HRESULT 0x80004005"));
}

TEST_F(DotnetIpcClientTest, AReplyCutInItsHeader) {
  FakeServer server(SocketPath(), Reply(0x00, 0).substr(0, 10));
  absl::Status s = DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("ends after 10 of 20 bytes"));
}

TEST_F(DotnetIpcClientTest, AReplyCutInItsPayload) {
  FakeServer server(SocketPath(), Reply(0x00, 0).substr(0, 22));
  absl::Status s = DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("ends after 2 of 4 bytes"));
}

TEST_F(DotnetIpcClientTest, AReplyOfAnotherProtocol) {
  std::string reply = Reply(0x00, 0);
  reply[0] = 'X';
  FakeServer server(SocketPath(), reply);
  EXPECT_THAT(DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll).message(),
              HasSubstr("does not start with DOTNET_IPC_V1"));
}

TEST_F(DotnetIpcClientTest, AReplyWhoseSizeIsBelowItsHeader) {
  std::string reply = Reply(0x00, 0);
  reply[14] = 8;
  FakeServer server(SocketPath(), reply);
  EXPECT_THAT(DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll).message(),
              HasSubstr("header says 8 bytes (expected 20 to 4096)"));
}

TEST_F(DotnetIpcClientTest, NoReplyTimesOut) {
  FakeServer server(SocketPath(), "", /*silent=*/true);
  absl::Status s = DotnetIpcClient(SocketPath(), /*timeout_ms=*/200).EnablePerfMap(Type::kAll);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("no reply after 200 ms"));
}

TEST_F(DotnetIpcClientTest, NoServer) {
  absl::Status s = DotnetIpcClient(SocketPath()).EnablePerfMap(Type::kAll);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("connect"));
}

TEST(CheckReplyTest, WrongCommandAndMissingHresult) {
  EXPECT_THAT(DotnetIpcClient::CheckReply(DotnetIpcClient::EncodeRequest(0x04, 0x05, "abcd")).message(),
              HasSubstr("command 0x0405, expected 0xff00 or 0xffff"));
  EXPECT_THAT(DotnetIpcClient::CheckReply(DotnetIpcClient::EncodeRequest(0xFF, 0x00, "")).message(),
              HasSubstr("has no HRESULT"));
  EXPECT_THAT(DotnetIpcClient::CheckReply(Reply(0x00, 0).substr(0, 23)).message(),
              HasSubstr("header says 24 bytes, it has 23"));
  EXPECT_TRUE(DotnetIpcClient::CheckReply(Reply(0x00, 0)).ok());
}

// The attack of issue 44: another user listens on the target's socket name.
// The client asks who serves the socket before it sends a byte: here this
// test process serves it, which is not the "target" pid 1.
TEST_F(DotnetIpcClientTest, ASocketServedByAnotherProcessIsNotUsed) {
  std::string request;
  {
    FakeServer server(SocketPath(), Reply(0x00, 0));
    ASSERT_TRUE(server.ok());
    DotnetIpcClient client(SocketPath());
    client.RequirePeer(1);
    absl::Status s = client.EnablePerfMap(Type::kAll);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("served by pid ", getpid())));
    EXPECT_THAT(s.message(), HasSubstr("not by pid 1: not its runtime's diagnostics server"));
    request = server.request();
  }
  EXPECT_EQ(request, "");  // nothing was sent
  FakeServer server(SocketPath() + "2", Reply(0x00, 0));
  DotnetIpcClient client(SocketPath() + "2");
  client.RequirePeer(static_cast<uint32_t>(getpid()));  // the process that serves it
  EXPECT_TRUE(client.EnablePerfMap(Type::kAll).ok());
}

// The runtime's "OK" is believed when its perf map is there: in the
// process's root, in $DOTNET_PerfMapJitDumpPath or /tmp, written since.
TEST(PerfMapWrittenTest, WantsAFreshMapWhereTheRuntimeWritesIt) {
  TempDir proc("pb_fake_proc");
  std::filesystem::create_directories(proc.path() + "/42/root/tmp");
  std::ofstream(proc.path() + "/42/environ") << "";
  EXPECT_EQ(DotnetIpcClient::PerfMapOf(42, proc.path()), proc.path() + "/42/root/tmp/perf-42.map");
  timespec now = {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const uint64_t since = static_cast<uint64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  absl::StatusOr<std::string> none = DotnetIpcClient::PerfMapWritten(42, since, 100, proc.path());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("perf-42.map: no such file after 100 ms"));
  const std::string map = proc.path() + "/42/root/tmp/perf-42.map";
  std::ofstream(map) << "7f0000001000 10 Program::Main()\n";
  struct timespec old[2] = {{1, 0}, {1, 0}};  // written long before the request
  ASSERT_EQ(::utimensat(AT_FDCWD, map.c_str(), old, 0), 0);
  EXPECT_THAT(DotnetIpcClient::PerfMapWritten(42, since, 100, proc.path()).status().message(),
              HasSubstr("not written since the request"));
  std::ofstream(map, std::ios::app) << "7f0000002000 10 Program::Other()\n";
  absl::StatusOr<std::string> found = DotnetIpcClient::PerfMapWritten(42, since, 100, proc.path());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, map);
  // Where the runtime is told to write it.
  std::ofstream(proc.path() + "/42/environ", std::ios::binary)
      << std::string("DOTNET_PerfMapJitDumpPath=/var/maps\0", 36);
  EXPECT_EQ(DotnetIpcClient::PerfMapOf(42, proc.path()), proc.path() + "/42/root/var/maps/perf-42.map");
}

// SocketOf on a fake /proc: PID's TMPDIR from its environ, under its root;
// only sockets named for that pid count; the newest wins.
TEST(SocketOfTest, FindsTheSocketInTheTargetsTmpdir) {
  TempDir proc("pb_fake_proc");
  const std::string tmp = proc.path() + "/42/root/var/tmp";
  std::filesystem::create_directories(tmp);
  std::ofstream(proc.path() + "/42/environ", std::ios::binary) << std::string("A=1\0TMPDIR=/var/tmp\0B=2\0", 24);
  EXPECT_EQ(DotnetIpcClient::SocketOf(42, proc.path()).status().code(), absl::StatusCode::kNotFound);
  std::ofstream(tmp + "/dotnet-diagnostic-42-1-socket") << "not a socket";
  const int other_pid = Listen(tmp + "/dotnet-diagnostic-421-5-socket");
  const int old_one = Listen(tmp + "/dotnet-diagnostic-42-2-socket");
  ASSERT_GE(old_one, 0);
  absl::StatusOr<std::string> found = DotnetIpcClient::SocketOf(42, proc.path());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, tmp + "/dotnet-diagnostic-42-2-socket");
  // A newer one (the pid reused after a crash left the old one behind).
  struct timespec times[2] = {{0, UTIME_NOW}, {1, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (tmp + "/dotnet-diagnostic-42-2-socket").c_str(), times, 0), 0);
  const int new_one = Listen(tmp + "/dotnet-diagnostic-42-3-socket");
  EXPECT_EQ(*DotnetIpcClient::SocketOf(42, proc.path()), tmp + "/dotnet-diagnostic-42-3-socket");
  for (int fd : {other_pid, old_one, new_one}) ::close(fd);
}

TEST(SocketOfTest, DefaultTmpAndNoProcess) {
  TempDir proc("pb_fake_proc");
  std::filesystem::create_directories(proc.path() + "/7/root/tmp");
  std::ofstream(proc.path() + "/7/environ") << "";
  const int fd = Listen(proc.path() + "/7/root/tmp/dotnet-diagnostic-7-99-socket");
  EXPECT_EQ(*DotnetIpcClient::SocketOf(7, proc.path()), proc.path() + "/7/root/tmp/dotnet-diagnostic-7-99-socket");
  ::close(fd);
  absl::StatusOr<std::string> gone = DotnetIpcClient::SocketOf(8, proc.path());
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(gone.status().message(), HasSubstr("dotnet-diagnostic-8-*-socket"));
}

}  // namespace
}  // namespace pageblame::recorder
