// Which frames of a stack are the application's own, for one-line stack
// summaries: the user reads their own code, not glibc's malloc internals.
// One rule for every summary (attribute, growth and maps text):
//
//   runtime frames: the C library and loader (libc, ld.so, libpthread, libm,
//   libdl, librt), C++ runtimes (libstdc++, libgcc_s, libc++), allocators
//   (jemalloc, tcmalloc, mimalloc), the .NET runtime (libcoreclr, libclrjit,
//   the host, libSystem.*.so, framework ReadyToRun code System.*.dll and
//   Microsoft.*.dll, and perf-map or jitdump frames of [System.*]/[Microsoft.*]
//   assemblies or runtime stubs), the JVM (libjvm and the JDK's libraries,
//   java.*/jdk.*/sun.* methods, interpreter and stubs), node/V8 (the node
//   binary, Builtin:/BytecodeHandler:/Stub: frames, node:internal JS),
//   CPython (libpython, the python binary), [vdso] and the kernel;
//   app frames: every other frame with a name; frames without one (an
//   address in JIT code no perf map names) are neither.
//
// The summary is the allocator entry the application called (the runtime
// frame nearest below its first frame, kept as context), then the
// application's frames from the innermost out, other frames between them
// left out:
//   __mmap <- sysmalloc <- _int_malloc <- malloc <- FillCache <- Main <- __libc_start_main
//   => malloc <- FillCache <- Main
// A stack with no app frame is summarized by its innermost frames, as
// before.
#ifndef PAGEBLAME_ANALYSIS_APP_FRAMES_H_
#define PAGEBLAME_ANALYSIS_APP_FRAMES_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "processor/symbols/symbolizer.h"

namespace pageblame::analysis {

enum class FrameKind { kApp, kRuntime, kUnknown };

// --frames: app (the rule above, the default) or all (the innermost frames,
// whatever they are).
enum class SummaryStyle { kApp, kAll };

// How one-line summaries are made: the style, and --hide REGEX: frames whose
// function or file (DSO path) the regular expression matches (ECMAScript
// syntax, anywhere in the text) are left out of summaries before the rule
// above is applied, as if they were not in the stack. Full stacks and JSON
// keep every frame.
struct SummaryOptions {
  SummaryOptions() = default;
  SummaryOptions(SummaryStyle s) : style(s) {}  // NOLINT: a style alone is the usual case
  SummaryStyle style = SummaryStyle::kApp;
  std::shared_ptr<const std::regex> hide;

  bool Hides(const symbols::Frame& f) const;
};
// --hide's pattern; an InvalidArgument error saying why it is no regular
// expression.
absl::StatusOr<std::shared_ptr<const std::regex>> CompileHide(absl::string_view pattern);

FrameKind KindOf(const symbols::Frame& f);

// The index of the first (innermost) app frame, or nullopt.
std::optional<size_t> FirstAppFrame(const std::vector<symbols::Frame>& frames);

// A frame's name in a one-line summary: its symbol, with a .NET signature
// (from a perf map or jitdump, JIT or ReadyToRun code) cut to the method
// ("void [app] Program::Leak(int32)[QuickJitted]" -> "Program::Leak"); an unnamed frame as its file ("[System.Private.CoreLib.dll]")
// or its address.
std::string SummaryName(const symbols::Frame& f);

// The indexes of the frames a summary of at most `max_frames` shows, leaf
// first (see above).
std::vector<size_t> SummaryFrames(const std::vector<symbols::Frame>& frames, size_t max_frames);

// A method as the first screens group stacks by it (analysis/app_method.h):
// its SummaryName without the inlined mark, and a V8 name without its tier
// (JS:~ interpreted, JS:^ baseline, JS:+ maglev, JS:* optimized are one
// function: "JS:*grow /app/big.js:3:20" -> "JS:grow /app/big.js:3:20"), as
// .NET's [QuickJitted]/[OptimizedTier1] are cut by SummaryName.
std::string MethodName(const symbols::Frame& f);

// What a first-screen row says after the method at frames[app]: the runtime
// frame it called (the framework call, or the allocator entry: SummaryFrames'
// first), then the allocator the stack reached there: the outermost frame of
// the C library or a malloc (libc, ld.so, libstdc++, libc++, jemalloc,
// tcmalloc, mimalloc) between them, when it is another frame. Indexes, the
// app's side first:
//   __mmap <- malloc <- NativeMemory::Alloc <- Program::Leak  => NativeMemory::Alloc, malloc
//   __mmap <- SystemNative_MMap <- ... <- MemoryMappedFile::CreateViewAccessor <- H12Leak
//                                                    => CreateViewAccessor, __mmap
std::vector<size_t> ContextFrames(const std::vector<symbols::Frame>& frames, size_t app);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_APP_FRAMES_H_
