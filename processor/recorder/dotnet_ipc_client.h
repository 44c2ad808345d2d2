// DotnetIpcClient: the two commands of a .NET runtime's diagnostics server
// that `pageblame record -p PID` needs, EnablePerfMap and DisablePerfMap, so
// that a .NET 8+ process started without DOTNET_PerfMapEnabled names its JIT
// frames while it is recorded (the runtime then writes /tmp/perf-PID.map,
// with the methods it had already compiled, and /tmp/jit-PID.dump).
//
// The server is a Unix socket every .NET Core 3+ runtime opens unless
// DOTNET_EnableDiagnostics=0: $TMPDIR/dotnet-diagnostic-PID-KEY-socket in the
// target's own mount namespace (so seen here through /proc/PID/root), TMPDIR
// being the target's (default /tmp). One command per connection; the
// protocol is dotnet/diagnostics' ipc-protocol.md: a 20-byte header
// ("DOTNET_IPC_V1\0", u16 total size, u8 command set, u8 command id, u16
// reserved; little-endian), then the payload. The reply's command set is
// 0xFF (server) with id 0x00 (OK) or 0xFF (error), its payload a u32 HRESULT.
//
// Root talks to it, and any local user can create a socket by that name (for
// a pid that is not even .NET): a socket is used only when the process
// listening on it is the target itself (SO_PEERCRED on the connection, before
// a byte is sent: so its owner is the target's too), and the runtime's "OK"
// is believed only once its perf map is there (PerfMapWritten).
//
//   absl::StatusOr<std::string> socket = DotnetIpcClient::SocketOf(pid);
//   DotnetIpcClient client(*socket);
//   client.RequirePeer(pid);
//   absl::Status s = client.EnablePerfMap(DotnetIpcClient::PerfMapType::kAll);
//   ...  client.DisablePerfMap();
#ifndef PAGEBLAME_RECORDER_DOTNET_IPC_CLIENT_H_
#define PAGEBLAME_RECORDER_DOTNET_IPC_CLIENT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame::recorder {

class DotnetIpcClient {
 public:
  // The runtime's PerfMap::PerfMapType (src/coreclr/vm/perfmap.h), the
  // values DOTNET_PerfMapEnabled takes too.
  enum class PerfMapType : uint32_t { kDisabled = 0, kAll = 1, kJitDump = 2, kPerfMap = 3 };

  static constexpr size_t kHeaderSize = 20;
  static constexpr uint8_t kProcessCommandSet = 0x04;
  static constexpr uint8_t kEnablePerfMap = 0x05;
  static constexpr uint8_t kDisablePerfMap = 0x06;
  static constexpr uint8_t kServerCommandSet = 0xFF;
  static constexpr uint8_t kResponseOk = 0x00;
  static constexpr uint8_t kResponseError = 0xFF;

  // `timeout_ms` bounds each connect, send and receive: a stopped or busy
  // runtime must not hang the recorder.
  explicit DotnetIpcClient(std::string socket_path, int timeout_ms = 3000)
      : socket_path_(std::move(socket_path)), timeout_ms_(timeout_ms) {}

  // PID's diagnostics socket as seen from here: the newest
  // PROC/PID/root/TMPDIR/dotnet-diagnostic-PID-*-socket (a pid reused after
  // a crash can leave an older one). NotFound when there is none: not .NET,
  // DOTNET_EnableDiagnostics=0, or the process is gone.
  static absl::StatusOr<std::string> SocketOf(uint32_t pid, const std::string& proc = "/proc");

  // Every exchange first checks that pid `pid` listens on the socket
  // (PermissionDenied naming who does, and nothing is sent, if not).
  void RequirePeer(uint32_t pid) { peer_ = pid; }

  // The perf map pid's runtime writes when it is on ($PerfMapJitDumpPath,
  // default /tmp, in the process's own root), as seen from here.
  static std::string PerfMapOf(uint32_t pid, const std::string& proc = "/proc");
  // Waits up to `timeout_ms` for PerfMapOf(pid) to be written at or after
  // `since_ns` (CLOCK_REALTIME, as file times are) by the process's owner.
  // OK with its path, else NotFound saying what was there.
  static absl::StatusOr<std::string> PerfMapWritten(uint32_t pid, uint64_t since_ns, int timeout_ms,
                                                    const std::string& proc = "/proc");

  absl::Status EnablePerfMap(PerfMapType type) const;
  absl::Status DisablePerfMap() const;

  // The request bytes: header and payload (exposed for tests).
  static std::string EncodeRequest(uint8_t command_set, uint8_t command_id, absl::string_view payload);
  // A whole reply (header and payload) checked: OK with HRESULT 0 is OK;
  // anything else is an error that names what came back.
  static absl::Status CheckReply(absl::string_view reply);

  const std::string& socket_path() const { return socket_path_; }

 private:
  // Connects, sends one request, reads the whole reply (the header says how
  // long), closes.
  absl::StatusOr<std::string> Exchange(const std::string& request) const;
  absl::Status Command(uint8_t command_id, absl::string_view payload) const;

  // PermissionDenied unless `peer_` (when set) is the process listening
  // on the connected socket `fd`.
  absl::Status CheckPeer(int fd) const;

  std::string socket_path_;
  int timeout_ms_;
  uint32_t peer_ = 0;
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_DOTNET_IPC_CLIENT_H_
