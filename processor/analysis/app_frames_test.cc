// The one rule for one-line stack summaries: the application's frames, with
// the allocator entry it called, runtimes' frames left out.
#include "processor/analysis/app_frames.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/analysis/frames_for_test.h"

namespace pageblame::analysis {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Summary(const std::vector<symbols::Frame>& frames, size_t max = 4) {
  std::vector<std::string> out;
  for (size_t i : SummaryFrames(frames, max)) out.push_back(SummaryName(frames[i]));
  return out;
}

constexpr char kLibc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";

TEST(AppFramesTest, MallocThroughGlibcIsTheAppsCallerWithMallocAsContext) {
  const std::vector<symbols::Frame> frames = {
      F("__GI___mmap64", kLibc, true), F("__mmap", kLibc), F("sysmalloc", kLibc), F("_int_malloc", kLibc),
      F("malloc", kLibc), F("fill_cache", "/srv/app/bin/server"), F("main", "/srv/app/bin/server"),
      F("__libc_start_call_main", kLibc)};
  EXPECT_EQ(FirstAppFrame(frames), 5u);
  EXPECT_THAT(Summary(frames), ElementsAre("malloc", "fill_cache", "main"));
}

TEST(AppFramesTest, RuntimeLibrariesOfEachKind) {
  for (const char* dso : {"/lib64/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                          "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/libcoreclr.so",
                          "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/System.Private.CoreLib.dll",
                          "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/libSystem.Native.so",
                          "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", "/usr/bin/node",
                          "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", "[vdso]"}) {
    EXPECT_EQ(KindOf(F("f", dso)), FrameKind::kRuntime) << dso;
  }
  EXPECT_EQ(KindOf(F("leak_native_mmap", "/tmp/app/libleaknative.so")), FrameKind::kApp);
  EXPECT_EQ(KindOf(F("", "")), FrameKind::kUnknown);
  // An address in the app's file with no name says nothing of whose code it is.
  EXPECT_EQ(KindOf(F("", "/srv/app/bin/server")), FrameKind::kUnknown);
}

TEST(AppFramesTest, JitFramesByTheirRuntimesNames) {
  const std::string map = "/tmp/perf-42.map";
  EXPECT_EQ(KindOf(F("void [dotnet-leak] Program::LeakHGlobal(int32,int32)[QuickJitted]", map)), FrameKind::kApp);
  EXPECT_EQ(KindOf(F("void [System.Private.CoreLib] System.SpanHelpers::Fill(!!0&,native uint,!!0)[QuickJitted]",
                     map)),
            FrameKind::kRuntime);
  EXPECT_EQ(KindOf(F("stub Allocate<FixupPrecode>", map)), FrameKind::kRuntime);
  EXPECT_EQ(KindOf(F("Builtin:ArrayBufferConstructor", map)), FrameKind::kRuntime);
  EXPECT_EQ(KindOf(F("JS:~prepareExecution node:internal/process/pre_execution:96:26", map)), FrameKind::kRuntime);
  EXPECT_EQ(KindOf(F("JS:*allocateBig /srv/app/jit.js:3:20", map)), FrameKind::kApp);
  EXPECT_EQ(KindOf(F("Ljava/util/ArrayList;::grow", map)), FrameKind::kRuntime);
  EXPECT_EQ(KindOf(F("LGrow;::main", map)), FrameKind::kApp);
}

// A .NET leak as recorded (traces/dotnet): Marshal.AllocHGlobal reaches
// malloc through ReadyToRun framework code and libSystem.Native.
TEST(AppFramesTest, DotnetMethodsAreNamedShortWithTheAllocatorAsContext) {
  const std::string map = "/tmp/perf-23474.map";
  const std::vector<symbols::Frame> frames = {
      F("__mmap", kLibc), F("sysmalloc", kLibc), F("malloc", kLibc),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/System.Private.CoreLib.dll"), F("", ""),
      F("void [dotnet-leak] Program::LeakHGlobal(int32,int32)[QuickJitted]", map),
      F("int32 [dotnet-leak] Program::Main(string[])[QuickJitted]", map),
      F("CallDescrWorkerInternal", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/libcoreclr.so")};
  EXPECT_THAT(Summary(frames), ElementsAre("malloc", "Program::LeakHGlobal", "Program::Main"));
  // An unnamed frame is shown by its file where it is the context.
  EXPECT_EQ(SummaryName(frames[3]), "[System.Private.CoreLib.dll]");
}

// The same stack with the runtime's jitdump read: the ReadyToRun frame the
// app called is named, and it is the context instead of malloc.
TEST(AppFramesTest, ReadyToRunFramesNamedByTheJitdumpAreShortToo) {
  const std::string corelib = "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll";
  const std::vector<symbols::Frame> frames = {
      F("__mmap", kLibc), F("malloc", kLibc),
      F("void* [System.Private.CoreLib] System.Runtime.InteropServices.NativeMemory::Alloc(native uint)[PreJIT]",
        corelib),
      F("void [dotnet-leak] Program::LeakNativeMemory(int32,int32)[QuickJitted]", "/tmp/perf-23474.map"),
      F("int32 [dotnet-leak] Program::Main(string[])[QuickJitted]", "/tmp/perf-23474.map")};
  EXPECT_EQ(KindOf(frames[2]), FrameKind::kRuntime);
  // The framework's namespace is left out of the summary, the app's kept.
  EXPECT_THAT(Summary(frames), ElementsAre("NativeMemory::Alloc", "Program::LeakNativeMemory", "Program::Main"));
  EXPECT_EQ(SummaryName(F("instance void [System.Private.CoreLib] System.Collections.Generic.List`1[System.Int32]"
                          "::AddWithResize(int32)[PreJIT]",
                          corelib)),
            "List`1[System.Int32]::AddWithResize");
  // A stub only the jitdump names (its frame's file is the jitdump), and an
  // app's own ReadyToRun assembly.
  EXPECT_EQ(KindOf(F("stub Allocate<FixupPrecode>", "/tmp/jit-23474.dump")), FrameKind::kRuntime);
  const symbols::Frame own = F("void [Shop] Contoso.Shop.Cache::Fill(int32)[PreJIT]", "/srv/shop/Shop.dll");
  EXPECT_EQ(KindOf(own), FrameKind::kApp);
  EXPECT_EQ(SummaryName(own), "Contoso.Shop.Cache::Fill");
  // An ELF symbol in a .dll-named file that has no .NET shape is left whole.
  EXPECT_EQ(SummaryName(F("operator new(unsigned long)", "/opt/x/weird.dll")), "operator new(unsigned long)");
}

TEST(AppFramesTest, AStackWithoutAppFramesKeepsItsInnermostFrames) {
  const std::vector<symbols::Frame> frames = {F("__brk", kLibc), F("__sbrk", kLibc), F("__default_morecore", kLibc),
                                              F("sysmalloc", kLibc), F("_int_malloc", kLibc)};
  EXPECT_THAT(Summary(frames), ElementsAre("__brk", "__sbrk", "__default_morecore", "sysmalloc"));
  EXPECT_THAT(Summary({}), ::testing::IsEmpty());
}

TEST(AppFramesTest, AtMostMaxFramesAndAnAppLeafHasNoContext) {
  const std::vector<symbols::Frame> frames = {F("grow_cache", "/a/phases"), F("step", "/a/phases"),
                                              F("run", "/a/phases"), F("main", "/a/phases")};
  EXPECT_THAT(Summary(frames, 2), ElementsAre("grow_cache", "step"));
}

// A first screen's row (issue 41): the method, then the framework call it
// made and the allocator that call reached.
TEST(AppFramesTest, ContextIsTheFrameworkCallThenTheAllocator) {
  const std::string corelib = "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll";
  const std::vector<symbols::Frame> frames = {
      F("__mmap", kLibc), F("sysmalloc", kLibc), F("malloc", kLibc),
      F("void* [System.Private.CoreLib] System.Runtime.InteropServices.NativeMemory::Alloc(native uint)[PreJIT]",
        corelib),
      F("void [dotnet-leak] Program::LeakNativeMemory(int32,int32)[QuickJitted]", "/tmp/perf-23474.map"),
      F("int32 [dotnet-leak] Program::Main(string[])[QuickJitted]", "/tmp/perf-23474.map")};
  ASSERT_EQ(FirstAppFrame(frames), 4u);
  EXPECT_EQ(MethodName(frames[4]), "Program::LeakNativeMemory");
  // The allocator is the outermost C library frame below the call: malloc.
  EXPECT_THAT(ContextFrames(frames, 4), ElementsAre(3, 2));
  // Straight into the C library: the call is the allocator, said once.
  const std::vector<symbols::Frame> direct = {F("__mmap", kLibc), F("map_cache", "/srv/app/bin/server")};
  EXPECT_THAT(ContextFrames(direct, 1), ElementsAre(0));
  // Nothing named below the method: no context.
  const std::vector<symbols::Frame> unnamed = {F("", "/srv/app/bin/server"), F("map_cache", "/srv/app/bin/server")};
  EXPECT_TRUE(ContextFrames(unnamed, 1).empty());
  EXPECT_TRUE(ContextFrames(direct, 5).empty()) << "an index past the stack";
}

// V8's tiers of one JS function, and an inlined frame, are one method.
TEST(AppFramesTest, MethodNameIsTheSameAtEveryTier) {
  const std::string map = "/tmp/perf-42.map";
  for (const char* tier : {"JS:~grow /app/big.js:3:20", "JS:*grow /app/big.js:3:20", "JS:^grow /app/big.js:3:20",
                           "JS:+grow /app/big.js:3:20"}) {
    EXPECT_EQ(MethodName(F(tier, map)), "JS:grow /app/big.js:3:20") << tier;
  }
  EXPECT_EQ(MethodName(F("fill_cache", "/srv/app/bin/server", true)), "fill_cache");
  // Only a perf map's names have tiers.
  EXPECT_EQ(MethodName(F("JS:*grow", "/srv/app/bin/server")), "JS:*grow");
}

}  // namespace
}  // namespace pageblame::analysis
