// Unit tests of the heap walker's parts: the built-in layout table (and its
// 2.36 row against this machine's libc6-dbg DWARF), the arena walk over a
// heap built by hand in memory (free lists, tcache, trim model) and over
// damaged copies of it, and the snapshot file.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/heap/arena_walker.h"
#include "processor/heap/buffer_memory.h"
#include "processor/heap/chunk_map.h"
#include "processor/heap/dwarf_layout.h"
#include "processor/heap/elf_facts.h"
#include "processor/heap/glibc_layout.h"
#include "processor/heap/heap_reader.h"
#include "processor/heap/heap_snapshot_file.h"
#include "processor/heap/live_memory.h"
#include "processor/heap/tcache_scanner.h"
#include "processor/heap/trim_model.h"
#include "processor/symbols/build_id.h"

namespace pageblame::heap {
namespace {

using ::testing::HasSubstr;

TEST(GlibcLayoutTest, TableRowsFollowTheReleases) {
  EXPECT_FALSE(BuiltinLayout(2, 27));
  EXPECT_FALSE(BuiltinLayout(2, 41));
  const GlibcLayout v28 = *BuiltinLayout(2, 28);
  EXPECT_EQ(v28.state_size, 2200u);
  EXPECT_EQ(v28.heap_info_size, 32u);
  EXPECT_EQ(v28.tcache_count_bytes, 1u);
  EXPECT_EQ(v28.tcache_struct_size, 576u);
  EXPECT_EQ(v28.tcache_key, TcacheKey::kNone);
  EXPECT_FALSE(v28.safe_linking);
  EXPECT_FALSE(v28.par_hp_pagesize);
  EXPECT_EQ(v28.par_sbrk_base, 72u);
  EXPECT_EQ(BuiltinLayout(2, 29)->tcache_key, TcacheKey::kPerthread);
  EXPECT_EQ(BuiltinLayout(2, 30)->tcache_struct_size, 640u);
  EXPECT_TRUE(BuiltinLayout(2, 32)->safe_linking);
  EXPECT_EQ(BuiltinLayout(2, 34)->tcache_key, TcacheKey::kRandom);
  const GlibcLayout v35 = *BuiltinLayout(2, 35);
  EXPECT_EQ(v35.heap_info_size, 48u);
  EXPECT_EQ(*v35.par_hp_pagesize, 48u);
  EXPECT_EQ(v35.par_n_mmaps, 60u);
  EXPECT_EQ(v35.par_sbrk_base, 96u);
  EXPECT_EQ(v35.par_size, 136u);
  EXPECT_EQ(BuiltinLayout(2, 40)->par_size, 136u);
}

// The 2.36 row against the DWARF of this machine's libc (libc6-dbg).
TEST(GlibcLayoutTest, Table236EqualsThisMachinesDwarf) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  absl::StatusOr<ElfFacts> f = ElfFacts::Read(libc, {}, {}, true);
  if (!f.ok() || f->version != "2.36") GTEST_SKIP() << "this machine's libc is not glibc 2.36";
  const std::string hex = symbols::BuildIdToHex(f->build_id);
  const std::string debug = absl::StrCat("/usr/lib/debug/.build-id/", hex.substr(0, 2), "/", hex.substr(2), ".debug");
  absl::StatusOr<GlibcLayout> d = DwarfLayout::Read(debug, 2, 36);
  if (!d.ok()) GTEST_SKIP() << "no libc6-dbg: " << d.status();
  const GlibcLayout t = *BuiltinLayout(2, 36);
  const auto fields = [](const GlibcLayout& l) {
    return std::vector<uint64_t>{l.state_size, l.state_flags, l.state_fastbins, l.state_top, l.state_bins,
                                 l.state_next, l.state_attached_threads, l.state_system_mem, l.nfastbins, l.nbins,
                                 l.par_size, l.par_trim_threshold, l.par_top_pad, l.par_mmap_threshold,
                                 l.par_arena_test, l.par_arena_max, l.par_thp_pagesize.value_or(1),
                                 l.par_hp_pagesize.value_or(1), l.par_n_mmaps, l.par_mmapped_mem, l.par_sbrk_base,
                                 l.par_tcache_bins, l.par_tcache_max_bytes, l.par_tcache_count, l.heap_info_size,
                                 l.heap_ar_ptr, l.heap_prev, l.heap_size, l.heap_mprotect_size, l.tcache_bins,
                                 l.tcache_struct_size, l.tcache_count_bytes, l.tcache_entries, l.tcache_entry_key};
  };
  EXPECT_EQ(fields(*d), fields(t));
}

TEST(TrimModelTest, ChunkPagesAsMtrim) {
  // A chunk holds releasable pages from ALIGN_UP(p + 48, 4096) to its end.
  EXPECT_EQ(TrimModel::ChunkPages(0x10000, 0x3000, 4096).start, 0x11000u);
  EXPECT_EQ(TrimModel::ChunkPages(0x10000, 0x3000, 4096).end, 0x13000u);
  EXPECT_EQ(TrimModel::ChunkPages(0x10fd0, 0x2030, 4096).start, 0x11000u);  // its 48 bytes end at the page
  EXPECT_EQ(TrimModel::ChunkPages(0x10fe0, 0x2030, 4096).start, 0x12000u);  // they run into the next page
  EXPECT_EQ(TrimModel::ChunkPages(0x10fe0, 0x2030, 4096).end, 0x13000u);
  EXPECT_EQ(TrimModel::ChunkPages(0x10000, 0x1000 + 47, 4096).end, 0u);  // not more than a page and a header
  EXPECT_EQ(TrimModel::ChunkPages(0x10010, 0x1ff0, 4096).end, 0x12000u);
}

TEST(ChunkMapTest, KeepsBitsForEveryChunkAndRecordsForSome) {
  ChunkMap m;
  m.Add(0x1000, 0x40, true);
  m.AddRecord(WalkedChunk(0x1040, 0x20, ChunkState::kInUse, 1, true, 0xf0, 0xb0), false);
  m.Add(0x1060, 0x30000, false);  // a large chunk: the next one starts a new stretch
  m.AddRecord(WalkedChunk(0x31060, 0x40, ChunkState::kInUse, 1, false, 0, 0), false);
  m.Add(0x310a0, 0x10, false);    // a fencepost chunk ends the heap
  m.Add(0x100000, 0x30, true);    // the next heap
  EXPECT_EQ(m.size(), 6u);
  std::vector<std::pair<uint64_t, uint64_t>> all;
  m.ForEachChunk([&](uint64_t a, uint64_t n) { all.push_back({a, n}); });
  EXPECT_EQ(all, (std::vector<std::pair<uint64_t, uint64_t>>{
                     {0x1000, 0x40}, {0x1040, 0x20}, {0x1060, 0x30000}, {0x31060, 0x40}, {0x310a0, 0x10},
                     {0x100000, 0x30}}));
  // A record as added; one made from the bits for the others, kept.
  ASSERT_NE(m.Find(0x1040), nullptr);
  EXPECT_TRUE(m.Find(0x1040)->free_bit());
  EXPECT_EQ(m.Find(0x1040)->fd, 0xf0u);
  WalkedChunk* large = m.Find(0x1060);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(large->size(), 0x30000u);
  EXPECT_FALSE(large->words());
  large->set_state(ChunkState::kFast);
  EXPECT_EQ(m.Find(0x1060), large);
  EXPECT_EQ(m.Find(0x1060)->state(), ChunkState::kFast);
  EXPECT_EQ(m.Find(0x310a0)->state(), ChunkState::kFence);
  EXPECT_EQ(m.Find(0x310a0)->size(), 0x10u);
  EXPECT_EQ(m.Find(0x100000)->size(), 0x30u);
  for (uint64_t not_a_start : {0x0ul, 0x1010ul, 0x1048ul, 0x20000ul, 0x310b0ul, 0x100030ul, 0x200000ul})
    EXPECT_EQ(m.Find(not_a_start), nullptr) << std::hex << not_a_start;
  std::vector<uint64_t> noted;
  m.ForEachNoted([&](const WalkedChunk& c) { noted.push_back(c.addr()); });
  EXPECT_EQ(noted, (std::vector<uint64_t>{0x1040, 0x1060, 0x31060, 0x310a0, 0x100000}));
}

TEST(ChunkMapTest, FindsEachRecordAmongMany) {
  // 1 KiB chunks over 200 MiB: past three blocks of rank counts (64 MiB each).
  ChunkMap m;
  constexpr uint64_t kChunks = 200 * 1024, kSize = 0x400, kBase = 0x10000;
  for (uint64_t i = 0; i < kChunks; ++i) {
    const uint64_t addr = kBase + i * kSize;
    if (i % 3 == 0) m.AddRecord(WalkedChunk(addr, kSize, ChunkState::kInUse, 1, false, addr, 0), i == 0);
    else m.Add(addr, kSize, i == 0);
  }
  for (uint64_t i = 0; i < kChunks; ++i) {
    const uint64_t addr = kBase + i * kSize;
    const WalkedChunk* c = m.Find(addr);
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->addr(), addr);
    ASSERT_EQ(c->size(), kSize);
    ASSERT_EQ(c->fd, i % 3 == 0 ? addr : 0) << i;
  }
}

// A target without bytes of its own in this process: what HeapReader reads
// of it, and how.
class CountingMemory : public BufferMemory {
 public:
  absl::Span<const uint8_t> Contiguous(uint64_t) const override { return {}; }
  bool ReadBulk(uint64_t addr, void* out, size_t n) override {
    bulk.push_back({addr, n});
    return Read(addr, out, n);
  }
  std::vector<std::pair<uint64_t, uint64_t>> bulk;
};

TEST(HeapReaderTest, StreamsWindowsAndJumpsByThePage) {
  std::string bytes(0x200000, '\0');
  for (size_t i = 0; i < bytes.size(); i += 8) bytes[i] = static_cast<char>(i >> 3);
  CountingMemory m;
  m.AddMapping({0x400000, 0x600000, true, true, false, 0, ""}, bytes);
  HeapReader r(&m, 0x5f0000);
  auto byte_at = [&](uint64_t addr) { return static_cast<char>((addr - 0x400000) >> 3); };
  const uint8_t* b = r.At(0x400008, 24);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(static_cast<char>(b[0]), byte_at(0x400008));
  EXPECT_NE(r.At(0x400ff8, 24), nullptr);  // across a page: its two pages
  EXPECT_NE(r.At(0x401808, 24), nullptr);  // read already
  ASSERT_NE(r.At(0x402008, 24), nullptr);  // on from there: a window
  EXPECT_EQ(static_cast<char>(r.At(0x402008, 24)[0]), byte_at(0x402008));
  EXPECT_EQ(static_cast<char>(r.At(0x441ff8, 8)[0]), byte_at(0x441ff8));
  ASSERT_NE(r.At(0x5e0008, 8), nullptr);   // a jump: its page
  ASSERT_NE(r.At(0x5e1008, 8), nullptr);   // on: a window, cut at the limit
  EXPECT_EQ(m.bulk, (std::vector<std::pair<uint64_t, uint64_t>>{{0x400000, 0x1000},
                                                                  {0x400000, 0x2000},
                                                                  {0x402000, HeapReader::kWindow},
                                                                  {0x5e0000, 0x1000},
                                                                  {0x5e1000, 0xf000}}));
  EXPECT_EQ(r.At(0x600000, 8), nullptr);
}

TEST(HeapReaderTest, ReadsWhatCanBeReadWhereAWindowCannot) {
  CountingMemory m;
  m.AddMapping({0x400000, 0x500000, true, true, false, 0, ""}, std::string(0x3000, 'x'));  // the rest unreadable
  HeapReader r(&m, 0x500000);
  ASSERT_NE(r.At(0x400008, 8), nullptr);
  ASSERT_NE(r.At(0x401008, 8), nullptr);  // its window fails: just these bytes
  ASSERT_NE(r.At(0x402ff8, 8), nullptr);
  EXPECT_EQ(r.At(0x402ffc, 8), nullptr);  // past the bytes
  EXPECT_EQ(r.At(0x403000, 8), nullptr);
  // A core's or a buffer's bytes are pointed at, not copied.
  BufferMemory held;
  held.AddMapping({0x400000, 0x500000, true, true, false, 0, ""}, std::string(0x3000, 'x'));
  HeapReader direct(&held, 0x500000);
  EXPECT_EQ(direct.At(0x401008, 8), reinterpret_cast<const uint8_t*>(held.BytesAt(0x400000)->data()) + 0x1008);
}

// Reading a live process (this one) in bulk: present pages as they are,
// pages never touched as zeros, and without touching them (pagemap, the
// kernel's word, says they are still not present).
TEST(LiveMemoryTest, ReadBulkLeavesUntouchedPagesAlone) {
  constexpr size_t kPage = 4096, kPages = 64;
  uint8_t* p = static_cast<uint8_t*>(
      mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  for (size_t i = 0; i < kPages; ++i)
    if (i % 8 < 3) std::memset(p + i * kPage, static_cast<int>(i + 1), kPage);
  absl::StatusOr<std::unique_ptr<LiveMemory>> m = LiveMemory::Open(getpid());
  ASSERT_TRUE(m.ok()) << m.status();
  const uint64_t a = reinterpret_cast<uint64_t>(p);
  std::vector<uint8_t> got(kPages * kPage - 100, 0xff);
  ASSERT_TRUE((*m)->ReadBulk(a + 100, got.data(), got.size()));
  // (Before this test reads the untouched pages itself, which maps them.)
  const int pagemap = open("/proc/self/pagemap", O_RDONLY);
  ASSERT_GE(pagemap, 0);
  for (size_t i = 0; i < kPages; ++i) {
    uint64_t e = 0;
    ASSERT_EQ(pread(pagemap, &e, 8, static_cast<off_t>((a / kPage + i) * 8)), 8);
    EXPECT_EQ((e >> 63) != 0, i % 8 < 3) << "page " << i;
  }
  close(pagemap);
  for (size_t at = 0; at < got.size(); ++at) {
    const size_t page = (at + 100) / kPage;
    ASSERT_EQ(got[at], page % 8 < 3 ? page + 1 : 0) << at;
  }
  munmap(p, kPages * kPage);
}

// A main arena built by hand (glibc 2.36's layout): malloc_state at
// kArena, a brk heap at kHeap with, in order:
//   A in use 0x100 | B free 0x2400 (unsorted bin) | C in use 0x40 |
//   D 0x20 in fastbin 0 | E in use 0x290, a tcache_perthread_struct whose
//   bin 1 lists F | F 0x30, tcache'd | G in use 0x30 | top 0x8000
class FakeHeap {
 public:
  static constexpr uint64_t kArena = 0x7f0000010000, kHeap = 0x560000000000;
  static constexpr uint64_t A = kHeap, B = A + 0x100, C = B + 0x2400, D = C + 0x40, E = D + 0x20, F = E + 0x290,
                            G = F + 0x30, kTop = G + 0x30, kTopSize = 0x8000, kKey = 0x1234567890abcdef;

  FakeHeap() : l_(*BuiltinLayout(2, 36)), state_(l_.state_size, '\0'), heap_(kTop + kTopSize - kHeap, '\0') {
    for (uint32_t i = 1; i < l_.nbins; ++i) {  // empty bins point at themselves
      const uint64_t bin = kArena + l_.state_bins + (i - 1) * 16 - 16;
      SetState(l_.state_bins + (i - 1) * 16, bin);
      SetState(l_.state_bins + (i - 1) * 16 + 8, bin);
    }
    const uint64_t unsorted = kArena + l_.state_bins - 16;
    SetState(l_.state_bins, B);
    SetState(l_.state_bins + 8, B);
    SetState(l_.state_fastbins, D);
    SetState(l_.state_top, kTop);
    SetState(l_.state_next, kArena);
    SetState(l_.state_system_mem, heap_.size());
    Chunk(A, 0x100, true);
    Chunk(B, 0x2400, true);
    Set(B + 16, unsorted);
    Set(B + 24, unsorted);
    Chunk(C, 0x40, false);  // B is free
    Chunk(D, 0x20, true);
    Set(D + 16, ((D + 16) >> 12) ^ 0);  // the fastbin's end, safe-linked
    Chunk(E, 0x290, true);
    Set(E + 16 + 2, 1);                 // counts[1] = 1
    Set(E + 16 + 128 + 8, F + 16);      // entries[1]
    Chunk(F, 0x30, true);
    Set(F + 16, (F + 16) >> 12);        // next: end (PROTECT_PTR of NULL)
    Set(F + 24, kKey);
    Chunk(G, 0x30, true);
    Chunk(kTop, kTopSize, true);
  }
  void Set(uint64_t at, uint64_t v) { std::memcpy(heap_.data() + (at - kHeap), &v, 8); }
  void SetState(uint64_t off, uint64_t v) { std::memcpy(state_.data() + off, &v, 8); }
  void Chunk(uint64_t at, uint64_t size, bool prev_in_use) { Set(at + 8, size | (prev_in_use ? 1 : 0)); }

  std::vector<ArenaWalk> Walk() {
    BufferMemory m;
    m.AddMapping({kHeap, kHeap + heap_.size(), true, true, false, 0, "[heap]"}, heap_);
    m.AddMapping({kArena, kArena + 0x1000, true, true, false, 0, "/lib/libc.so.6"}, state_);
    ArenaWalker walker(&m, l_, {kHeap, uint64_t{64} << 20});
    std::vector<ArenaWalk> w = {walker.Walk(kArena, true)};
    TcacheScanner(&m, l_, kKey, nullptr).Scan(&w);
    return w;
  }
  const GlibcLayout& layout() const { return l_; }

 private:
  GlibcLayout l_;
  std::string state_, heap_;
};

TEST(ArenaWalkerTest, CountsEveryKindOfFreeChunk) {
  FakeHeap h;
  std::vector<ArenaWalk> w = h.Walk();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].damage, "");
  EXPECT_EQ(w[0].chunks.size(), 7u);
  EXPECT_EQ(w[0].binned_bytes, 0x2400u);
  EXPECT_EQ(w[0].binned_count, 1u);
  EXPECT_EQ(w[0].binned_flag_bytes, 1u);
  EXPECT_EQ(w[0].fast_bytes, 0x20u);
  EXPECT_EQ(w[0].tcache_bytes, 0x30u);
  EXPECT_EQ(w[0].top_size, FakeHeap::kTopSize);
  // malloc_trim: B's pages past its header; top beyond MINSIZE + 1, in pages.
  const std::vector<residency::PageRange> r = TrimModel::Releasable(w[0], 4096, 0);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].start, FakeHeap::kHeap + 0x1000);
  EXPECT_EQ(r[0].end, FakeHeap::kHeap + 0x2000);
  EXPECT_EQ(r[1].end, FakeHeap::kTop + FakeHeap::kTopSize);
  EXPECT_EQ(r[1].size(), 0x7000u);
}

TEST(ArenaWalkerTest, ConsolidationMergesFastbinChunksIntoTop) {
  // G freed to a fastbin next to top: malloc_consolidate merges it into top
  // before systrim, so the top trimmed grows by it.
  FakeHeap h;
  h.SetState(h.layout().state_fastbins + 8, FakeHeap::G);  // fastbin 1: 0x30 chunks
  h.Set(FakeHeap::G + 16, (FakeHeap::G + 16) >> 12);
  std::vector<ArenaWalk> w = h.Walk();
  EXPECT_EQ(w[0].damage, "");
  EXPECT_EQ(w[0].fast_count, 2u);
  const std::vector<residency::PageRange> r = TrimModel::Releasable(w[0], 4096, 0);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].size(), (FakeHeap::kTopSize + 0x30 - 33) / 4096 * 4096);
}

TEST(ArenaWalkerTest, DamageIsNamedAndBounded) {
  struct Case {
    const char* name;
    std::function<void(FakeHeap*)> harm;
    const char* words;
  };
  const GlibcLayout l = *BuiltinLayout(2, 36);
  const std::vector<Case> cases = {
      {"unsorted cycle", [](FakeHeap* h) { h->Set(FakeHeap::B + 16, FakeHeap::B); }, "a cycle"},
      {"fastbin cycle", [](FakeHeap* h) { h->Set(FakeHeap::D + 16, ((FakeHeap::D + 16) >> 12) ^ FakeHeap::D); },
       "a cycle"},
      {"odd size", [](FakeHeap* h) { h->Chunk(FakeHeap::C, 0x48, false); }, "impossible size 0x48"},
      {"size past top", [](FakeHeap* h) { h->Chunk(FakeHeap::C, 0x100000, false); }, "impossible size"},
      {"bin pointer out", [l](FakeHeap* h) { h->SetState(l.state_bins, 0x1000); }, "outside the arena's heaps"},
      {"fastbin in the middle of a chunk", [l](FakeHeap* h) { h->SetState(l.state_fastbins, FakeHeap::A + 0x40); },
       "not the start of a chunk"},
      {"bin chunk in use", [](FakeHeap* h) { h->Chunk(FakeHeap::C, 0x40, true); }, "marks it in use"},
      {"fastbin wrong size", [l](FakeHeap* h) { h->SetState(l.state_fastbins + 24, FakeHeap::C); }, "not this bin's"},
      {"chunk on two lists", [l](FakeHeap* h) { h->SetState(l.state_fastbins + 16, FakeHeap::D); }, "met again"},
      {"top unreadable", [l](FakeHeap* h) { h->SetState(l.state_top, 0x10); }, "top chunk 0x10 cannot be read"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHeap h;
    c.harm(&h);
    std::vector<ArenaWalk> w = h.Walk();
    EXPECT_THAT(w[0].damage, HasSubstr(c.words));
  }
}

// The walk keeps no record of an in-use chunk whose first word is no list
// pointer (C: zeros, which safe-linking reveals as a misaligned pointer). A
// damaged list that reaches it anyway counts it as the walk saw it.
TEST(ArenaWalkerTest, AListMemberWithoutARecordCountsAsIfItHadOne) {
  FakeHeap h;
  h.SetState(h.layout().state_fastbins + 16, FakeHeap::C);  // fastbin 2: 0x40 chunks
  std::vector<ArenaWalk> w = h.Walk();
  EXPECT_EQ(w[0].fast_count, 2u);
  EXPECT_EQ(w[0].fast_bytes, 0x20u + 0x40u);
  EXPECT_THAT(w[0].damage, HasSubstr("fastbin 2: pointer 0x560000002 after 1 chunks is outside the arena's heaps"));
  std::vector<std::pair<uint64_t, ChunkState>> noted;
  w[0].ForEachNoted([&](const WalkedChunk& c) { noted.push_back({c.addr(), c.state()}); });
  EXPECT_THAT(noted, ::testing::Contains(std::pair<uint64_t, ChunkState>{FakeHeap::C, ChunkState::kFast}));
  EXPECT_THAT(noted, ::testing::Not(::testing::Contains(::testing::Pair(FakeHeap::A, ::testing::_))))
      << "A's first word is no list pointer: no record";
}

TEST(ArenaWalkerTest, ATcacheListThatDoesNotCheckOutIsNotCounted) {
  FakeHeap h;
  h.Set(FakeHeap::F + 24, 0);  // F lacks the key: E's only list fails, so E is user data
  std::vector<ArenaWalk> w = h.Walk();
  EXPECT_EQ(w[0].tcache_bytes, 0u);
  EXPECT_EQ(w[0].damage, "");
}

HeapSnapshot SampleSnapshot() {
  HeapSnapshot s;
  s.pid = 4242;
  s.glibc_version = "2.36";
  s.layout = LayoutSource::kDwarf;
  s.layout_from = "/usr/lib/debug/x.debug";
  s.time = 123456789;
  s.threads = 5;
  s.cpus = 2;
  s.attempts = 2;
  s.mmapped_count = 2;
  s.mmapped_bytes = 80 << 20;
  ArenaStats a;
  a.address = 0x7f0000010000;
  a.main = true;
  a.figures = {1 << 20, 1 << 19, 1 << 19, 64, 32, 4096, 7, 8192, 4096, 4096};
  a.binned_chunks = 3;
  ArenaStats b = a;
  b.main = false;
  b.torn = true;
  b.damage = "bin 3: a cycle";
  b.figures.free_resident_bytes.reset();
  b.figures.releasable_resident_bytes.reset();
  s.arenas = {a, b};
  s.free_ranges = {{0x560000001000, 0x560000001030, 0, FreeKind::kFastbin},
                   {0x560000002000, 0x560000003000, 0, FreeKind::kTop},
                   {0x7f0004000000, 0x7f0004000400, 1, FreeKind::kTcache}};
  return s;
}

absl::StatusOr<HeapSnapshotFile> Parse(const std::string& bytes) {
  return ParseHeapSnapshotFile(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                               "t.heap");
}

TEST(HeapSnapshotFileTest, RoundTrips) {
  const HeapSnapshot s = SampleSnapshot();
  HeapSnapshot core = s;
  core.time.reset();
  core.pid = 7;
  const std::string bytes = EncodeHeapFileHeader(1) + EncodeHeapSnapshot(s) + EncodeHeapSnapshot(core);
  absl::StatusOr<HeapSnapshotFile> f = Parse(bytes);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->clockid, 1);
  ASSERT_EQ(f->snapshots.size(), 2u);
  EXPECT_TRUE(f->snapshots[0] == s);
  EXPECT_TRUE(f->snapshots[1] == core);
  EXPECT_LT(EncodeHeapSnapshot(s).size(), 200u);
}

TEST(HeapSnapshotFileTest, BadFilesSayWhereAndWhat) {
  const std::string good = EncodeHeapFileHeader(1) + EncodeHeapSnapshot(SampleSnapshot());
  EXPECT_THAT(Parse("PBRESID1").status().message(), HasSubstr("not a pageblame heap snapshot file"));
  std::string v2 = good;
  v2[8] = 2;
  EXPECT_THAT(Parse(v2).status().message(), HasSubstr("offset 8: version 2"));
  // Every cut short is an error, never a crash.
  for (size_t n = kHeapFileHeaderSize + 1; n < good.size(); ++n)
    EXPECT_FALSE(Parse(good.substr(0, n)).ok()) << n;
  EXPECT_THAT(Parse(good.substr(0, good.size() - 1)).status().message(), HasSubstr("truncated"));
  HeapSnapshot bad = SampleSnapshot();
  bad.free_ranges[2].arena = 9;
  EXPECT_THAT(Parse(EncodeHeapFileHeader(1) + EncodeHeapSnapshot(bad)).status().message(), HasSubstr("arena 9"));
}

}  // namespace
}  // namespace pageblame::heap
