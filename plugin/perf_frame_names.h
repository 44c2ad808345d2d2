// Names perf itself gave to the user frames of the stacks the plugin prints.
//
// perf resolves an address only in the context of the sample being filtered
// (perf_dlfilter_fns.resolve_address uses that sample's thread:
// tools/perf/util/dlfilter.c, dlfilter__resolve_address), so names are asked
// for while a sample of the printed call is at hand, once per (pid, ip).
//
//   PerfFrameNames names;
//   names.Note(pid, user_ips, [&](uint64_t ip, PerfFrame* f) { return AskPerf(ip, f); });
//   if (const PerfFrame* f = names.Find(pid, ip)) ... f->symbol ...
//
// An exec inside the traced pid maps new code at possibly the same
// addresses; the key ignores that (the ips of two images rarely coincide).
#ifndef PAGEBLAME_PLUGIN_PERF_FRAME_NAMES_H_
#define PAGEBLAME_PLUGIN_PERF_FRAME_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/types/span.h"

namespace pageblame::plugin {

struct PerfFrame {
  std::optional<std::string> symbol;  // nullopt: perf found no symbol
  uint64_t offset = 0;                // ip - symbol start
  std::string dso;                    // "" if perf found no mapping
};

class PerfFrameNames {
 public:
  // False if perf could not say anything about `ip`.
  using Resolver = absl::FunctionRef<bool(uint64_t ip, PerfFrame* out)>;

  // Asks `resolve` for each ip not yet known for `pid`.
  void Note(uint32_t pid, absl::Span<const uint64_t> ips, Resolver resolve);
  const PerfFrame* Find(uint32_t pid, uint64_t ip) const;
  size_t size() const { return names_.size(); }
  size_t asked() const { return asked_; }

 private:
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, std::optional<PerfFrame>> names_;
  size_t asked_ = 0;
};

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_PERF_FRAME_NAMES_H_
