// The application method a stack is blamed on by the first screens of
// `attribute` and `growth`: its innermost application frame (FirstAppFrame
// of app_frames.h: the frame JSON's "first_app_frame" names), after the
// frames --hide matches are left out. Stacks are grouped by it
// (method_groups.h): one row per method, however many framework paths lead
// to it.
//
//   AppMethod m = MethodOf(frames, summary_options);
//   //  __mmap <- malloc <- NativeMemory::Alloc <- Program::LeakNativeMemory <- Program::Main
//   //  m.name == "Program::LeakNativeMemory", m.app == true,
//   //  m.context == {"NativeMemory::Alloc", "malloc"}
//
// A stack with no application frame (a runtime's own thread, the loader
// mapping a library) is named by its summary, the innermost frames as a
// one-line summary says them ("__mprotect <- setup_stack_prot (inlined) <-
// pthread_create@GLIBC_2.2.5 <- [libcoreclr.so]"), with `app` false: stacks
// that print the same are one row.
#ifndef PAGEBLAME_ANALYSIS_APP_METHOD_H_
#define PAGEBLAME_ANALYSIS_APP_METHOD_H_

#include <string>
#include <vector>

#include "processor/analysis/app_frames.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::analysis {

struct AppMethod {
  std::string name;  // MethodName of the app frame; the summary without one
  bool app = false;  // an application frame names it
  // What the row says after the name, nearest first: ContextFrames' names
  // (the framework call, the allocator), or with SummaryStyle::kAll the
  // frames just below the method, whatever they are (at most 3). Empty
  // without an app frame.
  std::vector<std::string> context;

  bool operator==(const AppMethod& o) const { return name == o.name && app == o.app; }
};

// `frames` leaf first, as session::StackFrames gives them.
AppMethod MethodOf(const std::vector<symbols::Frame>& frames, const SummaryOptions& options);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_APP_METHOD_H_
