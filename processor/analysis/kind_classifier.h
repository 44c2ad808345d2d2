// Says what each region version of a trace is (region_kind.h), from its
// attributes and the stacks of its creating and committing calls. The
// stacks are the session's (session/stack_frames.h: symbolized once for
// every analysis and renderer) and each stack's role is kept, so
// classifying every version of a big trace symbolizes each stack once.
//
//   KindClassifier kinds(session.frames());
//   RegionKind k = kinds.Of(idx.version(id));
//   AttributeOptions o;  o.kind_of = kinds.Function();
#ifndef PAGEBLAME_ANALYSIS_KIND_CLASSIFIER_H_
#define PAGEBLAME_ANALYSIS_KIND_CLASSIFIER_H_

#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "processor/analysis/region_kind.h"
#include "processor/index/trace_index.h"
#include "processor/session/stack_frames.h"

namespace pageblame::analysis {

class KindClassifier {
 public:
  explicit KindClassifier(session::StackFrames& frames) : idx_(frames.index()), frames_(frames) {}

  RegionKind Of(const index::Version& v);
  // Of(), as a KindFunction; valid while this classifier lives.
  KindFunction Function() {
    return [this](const index::Version& v) { return Of(v); };
  }
  // What a call's stack says (kNone for an invalid id).
  StackRole Role(EventId call);

 private:
  const index::TraceIndex& idx_;
  session::StackFrames& frames_;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, StackRole> roles_;  // by (StackId, pid)
  // (process, path) of every executable file mapping of the trace, made on
  // the first file asked about: one pass over the versions.
  bool exec_files_made_ = false;
  absl::flat_hash_set<std::pair<uint32_t, uint32_t>> exec_files_;
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_KIND_CLASSIFIER_H_
