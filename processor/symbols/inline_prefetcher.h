// Opens the DWARF of the DSOs whose inlined frames printing will look up,
// on a thread of its own while the trace is still being read: libdw
// decompresses a separate debug file's sections whole when it opens them
// (~0.16 s for Debian's libc6-dbg), which would otherwise come after the
// load, before the first stack is printed.
//
//   InlinePrefetcher pre(/*demangle_params=*/false);
//   pre.Request(location);                 // from any thread, once per file
//   ...
//   auto r = pre.Take(location);           // waits if still opening
//   if (r) resolver = std::move(*r);       // else: never requested, open it here
//
// Requests are served one at a time, in order; the destructor drops what
// was not started and waits for the one being opened.
#ifndef PAGEBLAME_SYMBOLS_INLINE_PREFETCHER_H_
#define PAGEBLAME_SYMBOLS_INLINE_PREFETCHER_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "processor/symbols/dso_locator.h"
#include "processor/symbols/inline_resolver.h"

namespace pageblame::symbols {

class InlinePrefetcher {
 public:
  explicit InlinePrefetcher(bool demangle_params) : demangle_params_(demangle_params) {}
  ~InlinePrefetcher();
  InlinePrefetcher(const InlinePrefetcher&) = delete;
  InlinePrefetcher& operator=(const InlinePrefetcher&) = delete;

  // Starts opening `loc`'s DWARF (once per file pair); thread-safe.
  void Request(const DsoLocation& loc);
  // What Request opened for `loc` (null: no DWARF), waiting for it if need
  // be; nullopt if it was never requested. Each result is taken once.
  // `refused`: as InlineResolver::Open's.
  std::optional<std::unique_ptr<InlineResolver>> Take(const DsoLocation& loc,
                                                      std::string* refused = nullptr);

 private:
  struct Slot {
    DsoLocation loc;
    bool done = false;
    std::unique_ptr<InlineResolver> resolver;
    std::string refused;
  };
  void Run();

  const bool demangle_params_;
  std::mutex mu_;
  std::condition_variable cv_;
  absl::flat_hash_map<std::string, std::unique_ptr<Slot>> slots_;
  std::deque<Slot*> queue_;
  bool stopping_ = false;
  std::thread worker_;  // started by the first Request
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_INLINE_PREFETCHER_H_
