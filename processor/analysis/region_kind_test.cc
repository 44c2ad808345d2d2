// Region kinds (region_kind.h) on real stacks: every stack below is the
// creating call's stack of a region of a bundled trace, as
// `pageblame maps --json` prints it (first frames only), from
// traces/rules-dwarf-zstd.data (C), traces/dotnet/dotnet-leak.data (.NET),
// traces/jvm-dwarf.data (HotSpot), traces/node-dwarf.data (V8) and
// traces/python-dwarf.data.
#include "processor/analysis/region_kind.h"

#include <sys/mman.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/analysis/frames_for_test.h"
#include "processor/analysis/kind_tally.h"

namespace pageblame::analysis {
namespace {

constexpr uint32_t kRw = PROT_READ | PROT_WRITE;

RegionKind Anon(const std::vector<symbols::Frame>& origin, uint32_t prot = kRw, uint32_t flags = 0) {
  RegionFacts f;
  f.prot = prot;
  f.flags = flags;
  f.origin = RoleOf(origin);
  return KindOf(f);
}

// c_thread_stack
const std::vector<symbols::Frame> kCThreadStack = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("allocate_stack", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("pthread_create@GLIBC_2.2.5", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("do_threads", "/work/main/traces/bin/rules"),
      F("main", "/work/main/traces/bin/rules"),
      F("__libc_start_call_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("__libc_start_main@@GLIBC_2.34", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("_start", "/work/main/traces/bin/rules"),
};

// c_arena
const std::vector<symbols::Frame> kCArena = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("alloc_new_heap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("_int_new_arena", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("arena_get2", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("tcache_init.part.0", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("tcache_init", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("thread_worker", "/work/main/traces/bin/rules"),
      F("start_thread", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("clone3", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
};

// python3 growing its heap (traces/python-dwarf.data)
const std::vector<symbols::Frame> kPyBrk = {
      F("__brk", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("__sbrk", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("__default_morecore@GLIBC_2.2.5", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("sysmalloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("_int_malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("tcache_init.part.0", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("tcache_init", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
};

// c_ld_bss
const std::vector<symbols::Frame> kCLdBss = {
      F("__mmap64", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", true),
      F("mmap64", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("_dl_map_segments", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", true),
      F("_dl_map_object_from_fd", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("_dl_map_object", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("openaux", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("_dl_catch_exception", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("_dl_map_object_deps", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("dl_main", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("_dl_sysdep_start", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("_dl_start_final", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", true),
      F("_dl_start", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
      F("_dl_start_user", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
};

// c_file
const std::vector<symbols::Frame> kCFile = {
      F("sc6", "/work/main/traces/bin/rules", true),
      F("do_mmap_file", "/work/main/traces/bin/rules"),
      F("main", "/work/main/traces/bin/rules"),
      F("__libc_start_call_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("__libc_start_main@@GLIBC_2.34", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("_start", "/work/main/traces/bin/rules"),
};

// c_plain
const std::vector<symbols::Frame> kCPlain = {
      F("sc6", "/work/main/traces/bin/rules", true),
      F("do_mmap_anon", "/work/main/traces/bin/rules"),
      F("main", "/work/main/traces/bin/rules"),
      F("__libc_start_call_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("__libc_start_main@@GLIBC_2.34", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("_start", "/work/main/traces/bin/rules"),
};

// dn_malloc
const std::vector<symbols::Frame> kDnMalloc = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("sysmalloc_mmap.constprop.0", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("sysmalloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("_int_malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll"),
      F("void [dotnet-leak] Program::LeakNativeMemory(int32,int32)[QuickJitted]", "/tmp/perf-23474.map"),
      F("int32 [dotnet-leak] Program::Main(string[])[QuickJitted]", "/tmp/perf-23474.map"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
};

// dn_thread
const std::vector<symbols::Frame> kDnThread = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("allocate_stack", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("pthread_create@GLIBC_2.2.5", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
};

// dn_doublemapper
const std::vector<symbols::Frame> kDnDoublemapper = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
};

// dn_native_mmap
const std::vector<symbols::Frame> kDnNativeMmap = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("leak_native_mmap", "/work/wt/dotnet/traces/src/dotnet-leak/bin/Release/net10.0/libleaknative.so"),
      F("void [dotnet-leak] Program::LeakNativeMmap(int32)[QuickJitted]", "/tmp/perf-23474.map"),
      F("int32 [dotnet-leak] Program::Main(string[])[QuickJitted]", "/tmp/perf-23474.map"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("coreclr_execute_assembly", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so"),
      F("", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libhostpolicy.so"),
      F("corehost_main", "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libhostpolicy.so"),
      F("", "/usr/share/dotnet/host/fxr/10.0.12/libhostfxr.so"),
};

// jvm_heap
const std::vector<symbols::Frame> kJvmHeap = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("os::pd_attempt_reserve_memory_at", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("os::attempt_reserve_memory_at", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("ReservedSpace::reserve", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("ReservedHeapSpace::try_reserve_range", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("ReservedHeapSpace::initialize_compressed_heap", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("ReservedHeapSpace::ReservedHeapSpace", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("Universe::reserve_heap", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("GenCollectedHeap::initialize", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("universe_init", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("init_globals", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("Threads::create_vm", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("JNI_CreateJavaVM", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
};

// jvm_code
const std::vector<symbols::Frame> kJvmCode = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("os::pd_reserve_memory", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("os::reserve_memory", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("ReservedSpace::reserve", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("ReservedCodeSpace::ReservedCodeSpace", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("CodeCache::initialize", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("init_globals", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("Threads::create_vm", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("JNI_CreateJavaVM", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("JavaMain", "/usr/lib/jvm/java-17-openjdk-amd64/lib/libjli.so"),
      F("ThreadJavaMain", "/usr/lib/jvm/java-17-openjdk-amd64/lib/libjli.so"),
      F("start_thread", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("clone3", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
};

// jvm_guard
const std::vector<symbols::Frame> kJvmGuard = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("os::pd_commit_memory", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("os::commit_memory", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("StackOverflow::create_stack_guard_pages", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("JavaThread::run", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("Thread::call_run", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("thread_native_entry", "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
      F("start_thread", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("clone3", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
};

// node_gc
const std::vector<symbols::Frame> kNodeGc = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("v8::base::OS::Allocate", "/usr/bin/node"),
      F("v8::internal::VirtualMemory::VirtualMemory", "/usr/bin/node"),
      F("v8::internal::MemoryAllocator::AllocateAlignedMemory", "/usr/bin/node"),
      F("v8::internal::MemoryAllocator::AllocateUninitializedChunkAt", "/usr/bin/node"),
      F("v8::internal::MemoryAllocator::AllocatePage", "/usr/bin/node"),
      F("v8::internal::SemiSpace::Commit", "/usr/bin/node"),
      F("v8::internal::SemiSpaceNewSpace::Prologue", "/usr/bin/node"),
      F("v8::internal::Heap::PerformGarbageCollection", "/usr/bin/node"),
      F("v8::internal::Heap::CollectGarbage", "/usr/bin/node"),
      F("v8::internal::HeapAllocator::AllocateRawWithLightRetrySlowPath", "/usr/bin/node"),
      F("v8::internal::HeapAllocator::AllocateRawWithRetryOrFailSlowPath", "/usr/bin/node"),
      F("v8::internal::Factory::NewFillerObject", "/usr/bin/node"),
};

// node_code
const std::vector<symbols::Frame> kNodeCode = {
      F("__GI___mmap64", "/usr/lib/x86_64-linux-gnu/libc.so.6", true),
      F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      F("v8::base::OS::Allocate", "/usr/bin/node"),
      F("v8::internal::VirtualMemory::VirtualMemory", "/usr/bin/node"),
      F("v8::internal::VirtualMemoryCage::InitReservation", "/usr/bin/node"),
      F("v8::internal::CodeRange::InitReservation", "/usr/bin/node"),
      F("v8::internal::Heap::SetUp", "/usr/bin/node"),
      F("v8::internal::Isolate::Init", "/usr/bin/node"),
      F("v8::internal::Snapshot::Initialize", "/usr/bin/node"),
      F("v8::Isolate::Initialize", "/usr/bin/node"),
      F("node::NewIsolate", "/usr/bin/node"),
      F("node::NodeMainInstance::NodeMainInstance", "/usr/bin/node"),
      F("node::Start", "/usr/bin/node"),
      F("__libc_start_call_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
};

TEST(RegionKindTest, GlibcThreadStacksOfCAndDotnet) {
  EXPECT_EQ(RoleOf(kCThreadStack), StackRole::kThreadStart);
  EXPECT_EQ(Anon(kCThreadStack), RegionKind::kThreadStack);
  // Program::ChurnManagedHeap started a .NET thread: glibc made its stack.
  EXPECT_EQ(Anon(kDnThread), RegionKind::kThreadStack);
  // Its guard page, PROT_NONE, is a reservation like any other.
  EXPECT_EQ(Anon(kDnThread, PROT_NONE), RegionKind::kReservation);
  // MAP_STACK alone says so too.
  EXPECT_EQ(Anon({}, kRw, MAP_STACK), RegionKind::kThreadStack);
}

TEST(RegionKindTest, JvmGuardPagesAreThreadStacks) {
  EXPECT_EQ(RoleOf(kJvmGuard), StackRole::kThreadStart);
}

TEST(RegionKindTest, MallocChunksAndArenas) {
  EXPECT_EQ(RoleOf(kCArena), StackRole::kMalloc);
  EXPECT_EQ(Anon(kCArena), RegionKind::kMalloc);
  // NativeMemory.Alloc -> malloc -> sysmalloc's mmap.
  EXPECT_EQ(Anon(kDnMalloc), RegionKind::kMalloc);
  // An arena's reserve is a reservation until grow_heap commits it.
  EXPECT_EQ(Anon(kCArena, PROT_NONE), RegionKind::kReservation);
}

TEST(RegionKindTest, BrkIsTheHeapWhateverTheStack) {
  EXPECT_EQ(RoleOf(kPyBrk), StackRole::kMalloc);
  RegionFacts f;
  f.prot = kRw;
  f.made_by_brk = true;
  f.origin = RoleOf(kPyBrk);
  EXPECT_EQ(KindOf(f), RegionKind::kHeap);
  f.made_by_brk = false;
  f.path = "[heap]";
  EXPECT_EQ(KindOf(f), RegionKind::kHeap);
}

TEST(RegionKindTest, FilesAndImages) {
  RegionFacts f;
  f.prot = PROT_READ;
  f.path = "/tmp/pageblame-rules.30091.dat";
  f.origin = RoleOf(kCFile);
  EXPECT_EQ(KindOf(f), RegionKind::kFile);
  f.path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  EXPECT_EQ(KindOf(f), RegionKind::kImage);
  f.path = "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll";
  EXPECT_EQ(KindOf(f), RegionKind::kImage);
  // The executable's data: not executable itself, but its file's text is.
  f.path = "/usr/share/dotnet/dotnet";
  EXPECT_EQ(KindOf(f), RegionKind::kFile);
  f.executable_file = true;
  EXPECT_EQ(KindOf(f), RegionKind::kImage);
  f.executable_file = false;
  f.path = "[vdso]";
  EXPECT_EQ(KindOf(f), RegionKind::kImage);
  // An fd mapping whose path the trace never saw is still a file.
  f.path = "";
  f.file_backed = true;
  EXPECT_EQ(KindOf(f), RegionKind::kFile);
  // Shared anonymous memory, as the kernel names it (Python's mmap.mmap(-1, n)).
  f.path = "/dev/zero (deleted)";
  f.file_backed = false;
  f.prot = PROT_READ | PROT_WRITE;
  EXPECT_EQ(KindOf(f), RegionKind::kAnon);
  // ld.so's zero-filled bss of a library: anonymous, but part of the image.
  EXPECT_EQ(RoleOf(kCLdBss), StackRole::kLoader);
  EXPECT_EQ(Anon(kCLdBss), RegionKind::kImage);
}

TEST(RegionKindTest, JitCode) {
  // HotSpot's code cache, rwx.
  EXPECT_EQ(RoleOf(kJvmCode), StackRole::kJitCode);
  EXPECT_EQ(Anon(kJvmCode, PROT_READ | PROT_WRITE | PROT_EXEC), RegionKind::kJitCode);
  // V8's executable pages, allocated like its heap pages.
  EXPECT_EQ(Anon(kNodeCode, PROT_READ | PROT_WRITE | PROT_EXEC), RegionKind::kJitCode);
  // .NET's W^X double mapping of its executable memory.
  RegionFacts f;
  f.prot = kRw;
  f.path = "/memfd:doublemapper (deleted)";
  f.origin = RoleOf(kDnDoublemapper);
  EXPECT_EQ(KindOf(f), RegionKind::kJitCode);
}

TEST(RegionKindTest, GcHeaps) {
  EXPECT_EQ(RoleOf(kJvmHeap), StackRole::kGcHeap);
  EXPECT_EQ(Anon(kJvmHeap), RegionKind::kGcHeap);
  EXPECT_EQ(Anon(kNodeGc), RegionKind::kGcHeap);
  // CoreCLR's GC by its function names (the bundled .NET trace's libcoreclr
  // has none: there the runtime's table says it).
  EXPECT_EQ(Anon({F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
                  F("GCToOSInterface::VirtualCommit(void*, unsigned long, unsigned short)",
                    "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so")}),
            RegionKind::kGcHeap);
  EXPECT_TRUE(TableSaysGcHeap("GCHeap Generation2 committed"));
  EXPECT_TRUE(TableSaysGcHeap("GCBookkeeping RegionOfRegions"));
  EXPECT_FALSE(TableSaysGcHeap("Image PortableExecutable"));
}

TEST(RegionKindTest, TheAppsOwnMmapIsAnon) {
  EXPECT_EQ(RoleOf(kCPlain), StackRole::kNone);
  EXPECT_EQ(Anon(kCPlain), RegionKind::kAnon);
  EXPECT_EQ(Anon(kDnNativeMmap), RegionKind::kAnon);
}

TEST(RegionKindTest, TheCommittingStackSpeaksFirst) {
  RegionFacts f;
  f.prot = kRw;
  f.origin = RoleOf(kCPlain);
  f.commit = RoleOf(kCArena);
  EXPECT_EQ(KindOf(f), RegionKind::kMalloc);
}

TEST(RegionKindTest, AnAppFunctionNamedLikeMallocIsNotMalloc) {
  EXPECT_EQ(RoleOf({F("__mmap", "/usr/lib/x86_64-linux-gnu/libc.so.6"), F("grow_heap", "/srv/app/bin/server")}),
            StackRole::kNone);
}

TEST(RegionKindTest, NamesParse) {
  for (RegionKind k : kAllKinds) EXPECT_EQ(*ParseKind(KindName(k)), k);
  EXPECT_EQ(*ParseKind("thread-stack"), RegionKind::kThreadStack);
  EXPECT_EQ(*ParseKind("gc_heap"), RegionKind::kGcHeap);
  EXPECT_FALSE(ParseKind("stack").ok());
  EXPECT_THAT(*ParseKinds("malloc,heap,malloc"), ::testing::ElementsAre(RegionKind::kMalloc, RegionKind::kHeap));
  EXPECT_FALSE(ParseKinds("malloc,").ok());
}

TEST(KindTallyTest, ReservationsNeverOutrankCommittedMemory) {
  KindTally t;
  EXPECT_EQ(t.Dominant(), std::nullopt);
  t.Add(RegionKind::kReservation, uint64_t{48} << 30);
  EXPECT_EQ(t.Dominant(), RegionKind::kReservation);
  t.Add(RegionKind::kMalloc, 4096);
  t.Add(RegionKind::kAnon, 8192);
  EXPECT_EQ(t.Dominant(), RegionKind::kAnon);
}

}  // namespace
}  // namespace pageblame::analysis
