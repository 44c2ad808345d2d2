// FrameSource: the symbolized frames of a call's stack, for the analyses
// that look at stacks without printing them (KindClassifier). The one
// implementation is OriginRenderer, so that what is classified and what is
// printed share one cache of symbolized stacks.
//
//   OriginRenderer r(idx, sym);   // a FrameSource
//   KindClassifier kinds(idx, r);
#ifndef PAGEBLAME_ANALYSIS_FRAME_SOURCE_H_
#define PAGEBLAME_ANALYSIS_FRAME_SOURCE_H_

#include <vector>

#include "processor/index/trace_index.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::analysis {

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // User frames of the event's stack, leaf first, symbolized; an ip's
  // inlined frames come before its own. Valid until the next call.
  virtual const std::vector<symbols::Frame>& Frames(const index::CallEvent& ev) = 0;
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_FRAME_SOURCE_H_
