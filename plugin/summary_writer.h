// What the plugin prints at `stop`: for each requested page (or each piece of
// a requested region) and each process that had it mapped at the end of the
// trace, the region, the call that created it and that call's stack, named by
// perf where perf named the frame (PerfFrameNames) and by the library's
// symbolizer otherwise, and the app method blamed for it (analysis/app_method.h);
// or that the page existed before the trace; and, when TRACE.rss is beside
// the trace, whether the page was resident. Text ends with the answered
// regions grouped by that method (creator_methods.h), one row per method.
//
//   SummaryWriter w(trace, selection, names, samples_per_call);
//   std::string text = w.Text(targets);    // human-readable, see docs/plugin.md
//   w.WriteJson(targets, stdout);          // == `pageblame query --json` on the same addresses
//
// The answers follow `pageblame query` (analysis/query_answers.h, printed by
// render/query_report.h): each address, in every selected process where a
// version covers it at the end; if none, its last tenant(s) and how the page
// went (Query: QueryAnswers with each page's lineage and residency).
#ifndef PAGEBLAME_PLUGIN_SUMMARY_WRITER_H_
#define PAGEBLAME_PLUGIN_SUMMARY_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "plugin/page_selection.h"
#include "plugin/perf_frame_names.h"
#include "plugin/recording_input.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/render/query_report.h"
#include "processor/session/session.h"

namespace pageblame::plugin {

class SummaryWriter {
 public:
  // `at`: the moment the answers are for (index::kEndOfTrace: the end).
  SummaryWriter(const session::Session& trace, const PageSelection& selection,
                std::optional<uint32_t> pid, uint64_t at, const PerfFrameNames& names,
                const absl::flat_hash_map<EventId, uint32_t>& samples,
                const residency::ResidencyIndex* rss = nullptr)
      : trace_(trace),
        selection_(selection),
        pid_(pid),
        at_(at),
        names_(names),
        samples_(samples),
        rss_(rss),
        kinds_(std::make_unique<analysis::KindClassifier>(trace.frames())) {}

  // perf read one chunk of the recording, whose samples spanned `seen`:
  // each answer's history says how many of its calls are in other chunks.
  void SetReadSpan(const SeenSpan* seen) { seen_ = seen; }

  std::string Text(const std::vector<Target>& targets) const;
  // Streamed an answer at a time (a .NET region list's answers, with their
  // histories, can be a gigabyte). False when a write failed.
  bool WriteJson(const std::vector<Target>& targets, std::FILE* out) const;

  // The creating calls whose stacks Text() prints: name their frames while
  // their samples go by.
  std::vector<EventId> PrintedStacks(const std::vector<Target>& targets) const;

 private:
  // What `pageblame query` would be asked: these addresses, this selection.
  analysis::QueryOptions Options(const std::vector<uint64_t>& addresses) const;
  // Query() of those options: with lineage and residency.
  std::vector<analysis::QueryAnswer> Answers(const std::vector<uint64_t>& addresses) const;
  std::string AnswerText(const analysis::QueryAnswer& a) const;
  // With a read span: the history calls perf did not read, the first few.
  std::string UnreadText(const std::vector<EventId>& unread) const;
  // "at the end of the trace" or "at 216.083882".
  std::string When() const;
  std::string StackText(const index::CallEvent& ev) const;
  // The regions of `versions` by the app method that created them
  // (creator_methods.h); "" for fewer than two regions.
  std::string MethodsText(const std::vector<VersionId>& versions) const;

  const session::Session& trace_;
  const PageSelection& selection_;
  std::optional<uint32_t> pid_;
  uint64_t at_;
  const PerfFrameNames& names_;
  const absl::flat_hash_map<EventId, uint32_t>& samples_;
  const residency::ResidencyIndex* rss_;  // TRACE.rss, or null
  const SeenSpan* seen_ = nullptr;        // a chunk's samples, or null
  // The regions' kinds, as `pageblame query` has them (inside malloc's
  // arenas its answers split in use / free); on the heap, so that the
  // KindFunction it gives stays valid.
  std::unique_ptr<analysis::KindClassifier> kinds_;
};

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_SUMMARY_WRITER_H_
