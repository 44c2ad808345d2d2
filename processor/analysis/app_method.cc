#include "processor/analysis/app_method.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_join.h"

namespace pageblame::analysis {
namespace {

// As many frames as a one-line summary of a stack with no app frame shows.
constexpr size_t kSummaryFrames = 4;
// The frames below a method said after it with --frames all.
constexpr size_t kAllContext = 3;

}  // namespace

AppMethod MethodOf(const std::vector<symbols::Frame>& all, const SummaryOptions& o) {
  // --hide: as if its frames were not in the stack (copied only then).
  std::vector<symbols::Frame> kept;
  if (o.hide) {
    std::copy_if(all.begin(), all.end(), std::back_inserter(kept), [&](const symbols::Frame& f) { return !o.Hides(f); });
  }
  const std::vector<symbols::Frame>& frames = o.hide ? kept : all;
  AppMethod m;
  const std::optional<size_t> app = FirstAppFrame(frames);
  if (!app) {
    std::vector<std::string> names;
    for (size_t i : SummaryFrames(frames, kSummaryFrames)) names.push_back(SummaryName(frames[i]));
    m.name = names.empty() ? "(no user stack)" : absl::StrJoin(names, " <- ");
    return m;
  }
  m.app = true;
  m.name = MethodName(frames[*app]);
  if (o.style == SummaryStyle::kAll) {
    for (size_t i = *app; i-- > 0 && m.context.size() < kAllContext;) m.context.push_back(SummaryName(frames[i]));
  } else {
    for (size_t i : ContextFrames(frames, *app)) m.context.push_back(SummaryName(frames[i]));
  }
  return m;
}

}  // namespace pageblame::analysis
