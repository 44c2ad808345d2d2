// Folded stacks (flamegraph.pl's input) as the renderers write them: every
// line splits into frames and a count that parses, and the counts add up to
// the answer's bytes: the attribution's, or the growth's totals at both ends.
#include "processor/render/folded_stacks.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "processor/render/growth_render.h"
#include "processor/render/render_sessions_for_test.h"

namespace pageblame::render {
namespace {

struct FoldedLine {
  std::vector<std::string> frames;  // root first
  std::vector<uint64_t> counts;
};

// "a;b;c N [M]" per line; a line that does not split so is a failure.
std::vector<FoldedLine> ParseFolded(const std::string& text, size_t counts) {
  std::vector<FoldedLine> out;
  EXPECT_TRUE(text.empty() || text.back() == '\n');
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    // Frames may hold spaces ("operator new(unsigned long)"): the counts are
    // the last fields.
    EXPECT_GT(fields.size(), counts) << line;
    if (fields.size() <= counts) continue;
    FoldedLine f;
    for (size_t i = fields.size() - counts; i < fields.size(); ++i) {
      uint64_t n = 0;
      EXPECT_TRUE(absl::SimpleAtoi(fields[i], &n)) << line;
      f.counts.push_back(n);
    }
    const size_t frames_end = (fields.end() - counts)->data() - line.data() - 1;
    f.frames = absl::StrSplit(line.substr(0, frames_end), ';');
    for (const std::string& name : f.frames) EXPECT_FALSE(name.empty()) << line;
    out.push_back(f);
  }
  return out;
}

TEST(FoldedStacksTest, EveryLineParsesAndTheCountsAddUpToTheAnswersBytes) {
  const session::Session& s = OpenTrace("commit-trace.data");
  const analysis::Attribution a =
      AttributionOf(s, Select(s, ManifestPid("commit-trace.data")), testing::TracePath("maps/commit-trace.11890.maps"),
                    analysis::CreditBy::kCommit);
  const std::vector<FoldedLine> lines = ParseFolded(FoldedStacks(s, a), 1);
  uint64_t sum = 0, before = 0, unmapped = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const FoldedLine& l = lines[i];
    sum += l.counts[0];
    if (l.frames == std::vector<std::string>{"[before trace]"}) {
      before = l.counts[0];
    } else if (l.frames == std::vector<std::string>{"[not mapped]"}) {
      unmapped = l.counts[0];
    } else {
      EXPECT_EQ(before + unmapped, 0u) << "the stacks come first";
      if (i > 0) {
        EXPECT_GE(lines[i - 1].counts[0], l.counts[0]) << "by bytes, most first";
      }
    }
  }
  EXPECT_EQ(sum, a.bytes);
  EXPECT_EQ(before, a.before_trace_bytes);
  EXPECT_EQ(unmapped, a.unmapped_bytes);
  ASSERT_GT(before, 0u);
  ASSERT_GT(unmapped, 0u);
  // Stacks that print alike are one line: never more lines than stacks.
  EXPECT_LE(lines.size(), a.stacks.size() + 2);
}

// Root first: the stack of the answer's first stack, read backwards.
TEST(FoldedStacksTest, FramesAreRootFirstAsTheStacksFramesReversed) {
  const session::Session& s = OpenTrace("phases-fp.data");
  const index::TraceIndex& idx = s.index();
  const analysis::Growth g = GrowthOf(s, Select(s, std::nullopt), "+0.2", "end", analysis::CreditBy::kCreate);
  ASSERT_FALSE(g.stacks.empty());
  OriginRenderer r(s.frames());
  const index::CallEvent& ev = idx.event(g.stacks[0].first_call);
  const std::vector<symbols::Frame> frames = s.frames().Frames(ev);
  std::vector<std::string> names = absl::StrSplit(FoldedFrames(idx, r, g.stacks[0].first_call), ';');
  ASSERT_EQ(names.size(), frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(names[frames.size() - 1 - i], FoldedFrameName(idx, ev, frames[i]));
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "grow_cache"), names.end());
}

TEST(FoldedStacksTest, GrowthLinesAddUpToTheTotalsAtBothEnds) {
  const session::Session& s = OpenTrace("phases-fp.data");
  const analysis::Growth g = GrowthOf(s, Select(s, std::nullopt), "+0.2", "end", analysis::CreditBy::kCreate);
  const std::vector<FoldedLine> lines = ParseFolded(GrowthFolded(s, g), 2);
  uint64_t from = 0, to = 0;
  for (const FoldedLine& l : lines) {
    from += l.counts[0];
    to += l.counts[1];
    EXPECT_FALSE(l.counts[0] == 0 && l.counts[1] == 0) << "nothing to draw";
  }
  EXPECT_EQ(from, g.total_from.mapped);
  EXPECT_EQ(to, g.total_to.mapped);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().frames, std::vector<std::string>{"[before trace]"});
  EXPECT_EQ(lines.back().counts, (std::vector<uint64_t>{g.before_from.mapped, g.before_to.mapped}));
}

}  // namespace
}  // namespace pageblame::render
