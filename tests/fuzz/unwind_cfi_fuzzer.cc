// libFuzzer target: the unwinder (unwinder.h) with hostile CFI. The input
// gives an ELF file's .eh_frame (or .debug_frame) and .eh_frame_hdr bytes,
// and a --call-graph dwarf sample: its registers and its stack copy. The
// file (symbols/raw_elf_for_test.h: one PT_LOAD at vaddr 0, .text of
// kTextSize bytes at kTextAt, the CFI section after it, 8-aligned, then
// .eh_frame_hdr, 8-aligned) is mapped executable at kMapStart, and the
// sample unwound twice:
//
//   u16 cfi_size, u16 hdr_size, u16 pc (offset in the mapping), u16 flags
//   17 x u64: REGS_USER as perf writes them for the mask below (ax, bx, cx,
//             dx, si, di, bp, sp, ip, r8..r15); ip and sp are replaced: ip
//             by kMapStart + pc, sp by kStackAt, where the stack copy is
//   cfi_size bytes: the CFI section
//   hdr_size bytes: .eh_frame_hdr (none if 0)
//   the rest: the stack copy (at most kMaxStack bytes)
//
// flags bit 0: the CFI is .debug_frame (not loaded) instead of .eh_frame.
// The stacks must start at the sample's pc, be no deeper than max_frames,
// be the same twice (the second from the rule cache), and each unwind must
// count one reason it stopped.
// The file is written once per input to /tmp/pageblame-fuzz-PID/cfi.so (the
// unwinder opens files by path).
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "processor/perf/perf_records.h"
#include "processor/symbols/mapping_history.h"
#include "processor/symbols/raw_elf_for_test.h"
#include "processor/unwind/unwinder.h"

namespace {

using pageblame::unwind::UnwindStats;
using pageblame::unwind::Unwinder;

constexpr size_t kHeaderSize = 8;
constexpr size_t kRegs = 17;
// perf's PERF_REG_X86_*: AX..IP (0-8), R8..R15 (16-23).
constexpr uint64_t kRegsMask = 0x1ff | (uint64_t{0xff} << 16);
constexpr size_t kSpIndex = 7, kIpIndex = 8;  // in the 17 values, as the mask orders them
constexpr uint64_t kMapStart = 0x555555554000;
constexpr uint64_t kStackAt = 0x7ffc00000000;
constexpr size_t kTextSize = 0x1000;
constexpr size_t kMaxStack = 65528;  // what a sample's u16 size leaves at most

[[noreturn]] void Fail(const char* what, uint64_t a = 0, uint64_t b = 0) {
  std::fprintf(stderr, "unwind_cfi: %s (0x%llx, 0x%llx)\n", what, static_cast<unsigned long long>(a),
               static_cast<unsigned long long>(b));
  std::abort();
}

uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// The fixed path inputs are written to, removed at exit.
const std::string& ElfPath() {
  static const std::string* path = [] {
    const std::string dir = "/tmp/pageblame-fuzz-" + std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) std::abort();  // a broken setup
    auto* p = new std::string(dir + "/cfi.so");
    std::atexit([] {
      ::unlink(ElfPath().c_str());
      ::rmdir(ElfPath().substr(0, ElfPath().rfind('/')).c_str());
    });
    return p;
  }();
  return *path;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

uint64_t Stops(const UnwindStats& s) {
  return s.stop_end + s.stop_no_module + s.stop_no_cfi + s.stop_stack_end + s.stop_bad_read +
         s.stop_not_above + s.stop_max_depth;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace perf = pageblame::perf;
  if (size < kHeaderSize + 8 * kRegs) return 0;
  const size_t cfi_size = U16(data), hdr_size = U16(data + 2);
  const uint64_t pc = U16(data + 4);
  const bool debug_frame = U16(data + 6) & 1;
  const uint8_t* regs_in = data + kHeaderSize;
  const uint8_t* rest = regs_in + 8 * kRegs;
  const size_t rest_size = size - kHeaderSize - 8 * kRegs;
  if (cfi_size + hdr_size > rest_size) return 0;

  pageblame::symbols::testing::RawElf elf;
  elf.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, std::string(kTextSize, '\xcc'));
  const std::string cfi(reinterpret_cast<const char*>(rest), cfi_size);
  if (debug_frame) {
    elf.AddSection(".debug_frame", SHT_PROGBITS, 0, cfi);
  } else {
    elf.AddSection(".eh_frame", SHT_PROGBITS, SHF_ALLOC, cfi);
  }
  if (hdr_size > 0) {
    elf.AddSection(".eh_frame_hdr", SHT_PROGBITS, SHF_ALLOC,
                   std::string(reinterpret_cast<const char*>(rest + cfi_size), hdr_size));
  }
  const std::string image = elf.Build();
  WriteFile(ElfPath(), image);

  std::vector<uint8_t> regs(regs_in, regs_in + 8 * kRegs);
  const uint64_t ip = kMapStart + pc, sp = kStackAt;
  std::memcpy(regs.data() + 8 * kIpIndex, &ip, 8);
  std::memcpy(regs.data() + 8 * kSpIndex, &sp, 8);
  const uint8_t* stack = rest + cfi_size + hdr_size;
  const size_t stack_size = std::min(rest_size - cfi_size - hdr_size, kMaxStack);

  perf::EventAttr attr;
  attr.sample_regs_user = kRegsMask;
  attr.sample_stack_user = kMaxStack;
  perf::Sample sample;
  sample.attr = &attr;
  sample.pid = sample.tid = 100;
  sample.time = 2;
  sample.regs_abi = perf::kRegsAbi64;
  sample.user_regs = absl::Span<const uint8_t>(regs.data(), regs.size());
  sample.user_stack = absl::Span<const uint8_t>(stack, stack_size);

  // No symfs, no build-id cache: the file is found at its path only.
  pageblame::symbols::MappingHistory maps;
  const uint64_t map_len = (image.size() + 0xfff) & ~uint64_t{0xfff};
  maps.AddMapping(sample.pid, 1, kMapStart, map_len, 0, ElfPath(), "");
  Unwinder::Options o;
  o.mappings = &maps;
  Unwinder u(o);

  std::vector<uint64_t> first, second;
  u.Unwind(sample, &first);
  u.Unwind(sample, &second);
  if (first.empty() || first.front() != ip) Fail("the leaf is not the sample's pc", ip);
  if (first.size() > o.max_frames) Fail("deeper than max_frames", first.size());
  if (first != second) Fail("the same sample unwound twice differs", first.size(), second.size());
  const UnwindStats st = u.stats();
  if (st.samples != 2 || Stops(st) != 2) Fail("not one stop per unwind", st.samples, Stops(st));
  return 0;
}
