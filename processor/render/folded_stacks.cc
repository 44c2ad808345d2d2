#include "processor/render/folded_stacks.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/analysis/file_offset.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/render/origin_renderer.h"

namespace pageblame::render {
namespace {

// A frame's name as one folded field: escaped as all text is (a newline
// would split the line, a control act on the terminal it is printed on),
// and ';', the frame separator, as ':'.
std::string Clean(std::string_view raw) {
  std::string name = EscapeName(raw);
  for (char& c : name) {
    if (c == ';') c = ':';
  }
  return name;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string FoldedFrameName(const index::TraceIndex& idx, const index::CallEvent& ev,
                            const symbols::Frame& f) {
  if (f.symbol && !f.symbol->empty()) return Clean(*f.symbol);
  if (f.dso.empty()) return Hex(f.ip);
  // perf script prints "[unknown] (dso)"; an offset into the file keeps
  // different unknown functions of one library apart.
  const std::optional<uint64_t> offset = analysis::FileOffsetAt(idx, ev, f.ip);
  if (offset) return Clean(absl::StrCat("[", BaseName(f.dso), "+", Hex(*offset), "]"));
  return Clean(absl::StrCat("[", BaseName(f.dso), "]"));
}

std::string FoldedFrames(const index::TraceIndex& idx, OriginRenderer& r, EventId call) {
  const index::CallEvent& ev = idx.event(call);
  const std::vector<symbols::Frame>& frames = r.Frames(ev);
  std::vector<std::string> names;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) names.push_back(FoldedFrameName(idx, ev, *it));
  if (names.empty()) names.push_back("[no user stack]");
  return absl::StrJoin(names, ";");
}

// Merging stays in render: which stacks become one line depends only on how
// their frames are printed (FoldedFrames), not on anything the index says.
std::string FoldedStacks(const session::Session& trace, const analysis::Attribution& a) {
  const index::TraceIndex& idx = trace.index();
  OriginRenderer r(trace.frames());
  std::map<std::string, uint64_t> lines;  // frames -> bytes
  for (const analysis::StackTotal& st : a.stacks) lines[FoldedFrames(idx, r, st.first_call)] += st.bytes;
  std::vector<std::pair<std::string, uint64_t>> sorted(lines.begin(), lines.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string out;
  for (const auto& [frames, bytes] : sorted) absl::StrAppend(&out, frames, " ", bytes, "\n");
  if (a.before_trace_bytes) absl::StrAppend(&out, "[before trace] ", a.before_trace_bytes, "\n");
  if (a.unmapped_bytes) absl::StrAppend(&out, "[not mapped] ", a.unmapped_bytes, "\n");
  return out;
}

}  // namespace pageblame::render
