#include "processor/analysis/app_frames.h"

#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace pageblame::analysis {
namespace {

absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// Shared objects and executables of runtimes, by the start of their file
// name ("libc.so.6", "libc-2.31.so", "ld-linux-x86-64.so.2").
constexpr std::array<absl::string_view, 24> kRuntimeFilePrefixes = {
    "libc.so",      "libc-",         "ld-linux",      "ld-",           "libpthread",   "libm.so",
    "libm-",        "libdl",         "librt",         "libstdc++",     "libgcc_s",     "libc++",
    "libjemalloc",  "libtcmalloc",   "libmimalloc",   "libcoreclr",    "libclrjit",    "libhostpolicy",
    "libhostfxr",   "libSystem.",    "libjvm",        "libjava",       "libpython",    "[vdso]"};

bool IsRuntimeFile(absl::string_view path) {
  if (path.empty()) return false;
  if (absl::StartsWith(path, "[kernel") || path == "[vsyscall]") return true;
  // The JDK's own libraries (libzip, libnio, ...) sit beside libjvm.
  if (absl::StrContains(path, "/lib/jvm/")) return true;
  const absl::string_view base = BaseName(path);
  for (absl::string_view p : kRuntimeFilePrefixes) {
    if (absl::StartsWith(base, p)) return true;
  }
  // Framework ReadyToRun code, and the runtimes' executables.
  if (absl::EndsWith(base, ".dll") && (absl::StartsWith(base, "System.") || absl::StartsWith(base, "Microsoft.")))
    return true;
  return base == "node" || base == "dotnet" || base == "java" || absl::StartsWith(base, "python");
}

// The C library, the loader and the allocators: where a runtime's or the
// application's memory request ends up (ContextFrames' allocator).
constexpr std::array<absl::string_view, 10> kAllocatorFilePrefixes = {
    "libc.so", "libc-", "ld-linux", "ld-", "libstdc++", "libc++", "libjemalloc", "libtcmalloc", "libmimalloc",
    "libpthread"};

bool IsAllocatorFile(absl::string_view path) {
  const absl::string_view base = BaseName(path);
  for (absl::string_view p : kAllocatorFilePrefixes) {
    if (absl::StartsWith(base, p)) return true;
  }
  return false;
}

// JIT frames named by a perf map: the runtime's own code and the framework's
// methods, as each runtime names them.
bool IsRuntimeJitSymbol(absl::string_view s) {
  // .NET: "stub ...", "void [System.Private.CoreLib] System.SpanHelpers::Fill(...)", and the
  // marshalling stubs the runtime generates for a P/Invoke or delegate, which perf maps list
  // under the caller's assembly ("native int [app] dynamicClass::IL_STUB_PInvoke(...)"): the
  // user's method is the one that called it.
  if (absl::StartsWith(s, "stub ") || absl::StrContains(s, "[System.") || absl::StrContains(s, "[Microsoft.") ||
      absl::StrContains(s, "dynamicClass::IL_STUB"))
    return true;
  // V8: builtins, bytecode handlers, stubs; node's own JavaScript.
  for (absl::string_view p : {"Builtin:", "BytecodeHandler:", "Stub:", "Handler:", "RegExp:"}) {
    if (absl::StartsWith(s, p)) return true;
  }
  if (absl::StartsWith(s, "JS:") && absl::StrContains(s, " node:")) return true;
  // HotSpot: the interpreter, stubs, and the JDK's classes.
  if (s == "Interpreter" || absl::StartsWith(s, "StubRoutines")) return true;
  for (absl::string_view p : {"Ljava/", "Ljdk/", "Lsun/", "java.", "jdk.", "sun."}) {
    if (absl::StartsWith(s, p)) return true;
  }
  return false;
}

// The files that name JIT code: a perf map or a jitdump.
bool IsPerfMap(absl::string_view dso) {
  const absl::string_view base = BaseName(dso);
  return (absl::StartsWith(base, "perf-") && absl::EndsWith(base, ".map")) ||
         (absl::StartsWith(base, "jit-") && absl::EndsWith(base, ".dump"));
}

// Where .NET method names come from: JIT code's map or jitdump, and
// ReadyToRun code in its assembly's own mapping (named by the jitdump).
bool HasDotnetNames(absl::string_view dso) {
  return IsPerfMap(dso) || absl::EndsWith(dso, ".dll") || absl::EndsWith(dso, ".exe");
}

// The length of "System.Runtime.InteropServices." in
// "System.Runtime.InteropServices.NativeMemory::Alloc": up to the last dot of
// the type's name outside generic brackets ("List`1[System.Int32]").
size_t NamespaceLength(absl::string_view method) {
  const size_t sep = method.find("::");
  size_t cut = 0;
  int depth = 0;
  for (size_t i = 0; i < sep && i < method.size(); ++i) {
    if (method[i] == '[' || method[i] == '<') ++depth;
    if ((method[i] == ']' || method[i] == '>') && depth > 0) --depth;
    if (method[i] == '.' && depth == 0) cut = i + 1;
  }
  return cut;
}

}  // namespace

FrameKind KindOf(const symbols::Frame& f) {
  if (IsPerfMap(f.dso)) {
    if (!f.symbol) return FrameKind::kUnknown;
    return IsRuntimeJitSymbol(*f.symbol) ? FrameKind::kRuntime : FrameKind::kApp;
  }
  if (IsRuntimeFile(f.dso)) return FrameKind::kRuntime;
  // An address without a name tells the reader nothing of whose code it is.
  return f.symbol ? FrameKind::kApp : FrameKind::kUnknown;
}

std::string SummaryName(const symbols::Frame& f) {
  if (!f.symbol) {
    if (f.dso.empty()) return absl::StrCat("0x", absl::Hex(f.ip));
    return absl::StrCat("[", BaseName(f.dso), "]");
  }
  absl::string_view s = *f.symbol;
  // .NET: "[static] [instance] RET [ASSEMBLY] Namespace.Type::Method(ARGS)[TIER]".
  const size_t asm_end = s.find("] ");
  const size_t sep = s.find("::");
  if (HasDotnetNames(f.dso) && asm_end != absl::string_view::npos && sep != absl::string_view::npos && asm_end < sep) {
    absl::string_view method = s.substr(asm_end + 2);
    method = method.substr(0, method.find('('));
    // The framework's namespaces are noise in a one-line summary (the full
    // name is in full stacks and JSON); the app's own are kept.
    if (KindOf(f) == FrameKind::kRuntime) method.remove_prefix(NamespaceLength(method));
    if (!method.empty()) return std::string(method);
  }
  return f.inlined ? absl::StrCat(s, " (inlined)") : std::string(s);
}

std::optional<size_t> FirstAppFrame(const std::vector<symbols::Frame>& frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    if (KindOf(frames[i]) == FrameKind::kApp) return i;
  }
  return std::nullopt;
}

std::vector<size_t> SummaryFrames(const std::vector<symbols::Frame>& frames, size_t max_frames) {
  std::vector<size_t> out;
  const std::optional<size_t> first = FirstAppFrame(frames);
  if (!first) {
    for (size_t i = 0; i < frames.size() && out.size() < max_frames; ++i) out.push_back(i);
    return out;
  }
  // The allocator entry the application called: the named runtime frame
  // nearest below it (unnamed frames between them skipped).
  for (size_t i = *first; i-- > 0;) {
    if (!frames[i].symbol) continue;
    if (KindOf(frames[i]) == FrameKind::kRuntime) out.push_back(i);
    break;
  }
  for (size_t i = *first; i < frames.size() && out.size() < max_frames; ++i) {
    if (KindOf(frames[i]) == FrameKind::kApp) out.push_back(i);
  }
  return out;
}

std::string MethodName(const symbols::Frame& f) {
  symbols::Frame whole = f;
  whole.inlined = false;  // the function is the same wherever its code was inlined
  std::string name = SummaryName(whole);
  // V8's perf map: "JS:" then the tier's mark, then the function.
  if (IsPerfMap(f.dso) && absl::StartsWith(name, "JS:") && name.size() > 3 &&
      absl::string_view("~^+*").find(name[3]) != absl::string_view::npos) {
    name.erase(3, 1);
  }
  return name;
}

std::vector<size_t> ContextFrames(const std::vector<symbols::Frame>& frames, size_t app) {
  std::vector<size_t> out;
  if (app > frames.size()) return out;
  // The runtime frame the app called: the named one nearest below it.
  for (size_t i = app; i-- > 0;) {
    if (!frames[i].symbol) continue;
    if (KindOf(frames[i]) == FrameKind::kRuntime) out.push_back(i);
    break;
  }
  // The allocator: the first named frame of the C library or a malloc on
  // the way from the app (or that call) to the leaf.
  for (size_t i = out.empty() ? app : out[0] + 1; i-- > 0;) {
    if (!frames[i].symbol || !IsAllocatorFile(frames[i].dso)) continue;
    if (out.empty() || out[0] != i) out.push_back(i);
    break;
  }
  return out;
}

bool SummaryOptions::Hides(const symbols::Frame& f) const {
  if (!hide) return false;
  if (f.symbol && std::regex_search(*f.symbol, *hide)) return true;
  return !f.dso.empty() && std::regex_search(f.dso, *hide);
}

absl::StatusOr<std::shared_ptr<const std::regex>> CompileHide(absl::string_view pattern) {
  // std::regex reports a bad pattern only by throwing: caught here, once.
  try {
    return std::make_shared<const std::regex>(std::string(pattern), std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad --hide '", pattern, "': ", e.what()));
  }
}

}  // namespace pageblame::analysis
