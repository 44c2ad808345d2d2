// Writes the seeds of the fuzz targets whose inputs are not files found in
// traces/ (tests/fuzz/corpus/TARGET/): small ELF cores made with
// CoreBuilder (core_file), compressed-record inputs from the records of
// traces/rules-pipe.data (compressed_records), and CFI + sample inputs with
// hand-written .eh_frame / .eh_frame_hdr / .debug_frame (unwind_cfi). The
// input layouts are the ones the targets' comments describe.
//
//   build/tests/fuzz/fuzz_make_seeds .   # from the checkout's root
#include <elf.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "processor/regions/core_builder_for_test.h"
#include "processor/regions/nt_file_note.h"

namespace {

namespace fs = std::filesystem;
using pageblame::regions::CoreBuilder;
using pageblame::regions::NtFileNote;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

void Write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
  std::printf("%s: %zu bytes\n", (dir / name).c_str(), bytes.size());
}

// --- core_file ---------------------------------------------------------------

void CoreSeeds(const fs::path& dir) {
  {  // 64-bit: a file mapping cut by a segment, one left out, a reserve.
    CoreBuilder b;
    b.AddLoad(0x400000, 0x3000, PF_R | PF_X);
    b.AddLoad(0x403000, 0x1000, PF_R | PF_W);
    b.AddLoad(0x7f0000000000, 0x10000, 0);
    b.AddLoad(0x500000, 0, 0);  // empty: skipped
    b.AddNote("CORE", NtFileNote::kType,
              b.NtFile({{0x400000, 0x402000, 0}, {0x402000, 0x404000, 2}, {0x7f1000000000, 0x7f1000003000, 0}},
                       {"/usr/bin/app", "/usr/bin/app", "/usr/lib/libc.so.6"}));
    Write(dir, "x86_64-nt-file.core", b.Build());
  }
  {  // 32-bit big-endian, gdb's page size of 1 (offsets in bytes).
    CoreBuilder b(/*is64=*/false, /*big_endian=*/true);
    b.AddLoad(0x8048000, 0x2000, PF_R | PF_X);
    b.AddLoad(0xbffdf000, 0x21000, PF_R | PF_W);
    b.AddNote("CORE", NtFileNote::kType, b.NtFile({{0x8048000, 0x8049000, 0}}, {"/bin/a"}, 1));
    Write(dir, "i386-be.core", b.Build());
  }
  {  // PN_XNUM, the [vsyscall] page, segment data in the file.
    CoreBuilder b;
    b.xnum = true;
    b.AddLoad(0x10000, 0x1000, PF_R, 0x1000);
    b.AddLoad(0xffffffffff600000, 0x1000, PF_R | PF_X);
    b.data_bytes = 0x1000;
    Write(dir, "xnum-vsyscall.core", b.Build());
  }
}

// --- compressed_records ------------------------------------------------------

// Kernel records and FINISHED_ROUND of a pipe-mode trace, at most `limit` bytes.
std::string PlainRecords(const std::string& trace, size_t limit) {
  std::string out;
  size_t pos = 16;
  while (pos + 8 <= trace.size()) {
    uint32_t type;
    uint16_t size;
    std::memcpy(&type, trace.data() + pos, 4);
    std::memcpy(&size, trace.data() + pos + 6, 2);
    if (size < 8) break;
    size_t whole = size;
    if (type == 66) {  // HEADER_TRACING_DATA: its data follows outside header.size
      uint32_t extra;
      std::memcpy(&extra, trace.data() + pos + 8, 4);
      whole += extra;
    }
    if ((type < 64 || type == 68) && out.size() + size <= limit) out += trace.substr(pos, size);
    pos += whole;
  }
  return out;
}

std::string Cuts(std::vector<uint16_t> cuts) {
  std::string s(1, static_cast<char>(cuts.size()));
  for (uint16_t c : cuts) Put(&s, c);
  return s;
}

// `plain` as one zstd stream flushed every `piece` bytes, ended if `end`.
std::string Zstd(const std::string& plain, size_t piece, bool end) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, 1);
  std::string z;
  std::string chunk(ZSTD_CStreamOutSize(), '\0');
  for (size_t i = 0; i < plain.size(); i += piece) {
    const std::string p = plain.substr(i, piece);
    ZSTD_inBuffer in{p.data(), p.size(), 0};
    const bool last = i + piece >= plain.size();
    size_t left;
    do {
      ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
      left = ZSTD_compressStream2(ctx, &out, &in, last && end ? ZSTD_e_end : ZSTD_e_flush);
      z.append(chunk.data(), out.pos);
    } while (!ZSTD_isError(left) && (left != 0 || in.pos < in.size));
  }
  ZSTD_freeCCtx(ctx);
  return z;
}

void CompressedSeeds(const fs::path& dir, const fs::path& root) {
  std::ifstream in(root / "traces/rules-pipe.data", std::ios::binary);
  const std::string trace((std::istreambuf_iterator<char>(in)), {});
  const std::string plain = PlainRecords(trace, 12000);
  // flags: 1 zstd data, 2 COMPRESSED2, 4 HEADER_FEATURE first, 8 end the frame.
  Write(dir, "content-cut.seed", std::string(1, '\0') + Cuts({1000, 333, 4096}) + plain);
  Write(dir, "content-compressed2-ended.seed",
        std::string(1, '\x0e') + Cuts({2500}) + plain);
  Write(dir, "content-cut-at-end.seed",
        std::string(1, '\x04') + Cuts({700, 64}) + plain.substr(0, plain.size() - 20));
  Write(dir, "zstd-flushed.seed", std::string(1, '\x05') + Cuts({500, 70, 2000}) + Zstd(plain, 900, false));
  // Two frames, the first ended, in COMPRESSED2 records.
  Write(dir, "zstd-two-frames.seed",
        std::string(1, '\x03') + Cuts({1200}) + Zstd(plain.substr(0, 4000), 4000, true) +
            Zstd(plain.substr(4000), 1500, false));
}

// --- unwind_cfi --------------------------------------------------------------

// unwind_cfi_fuzzer.cc's layout: RawElf puts .text (0x1000 bytes) at 0x78,
// the CFI section at 0x1078; the mapping starts at kMapStart, the stack copy
// at kStackAt.
constexpr uint64_t kTextAt = 0x78, kTextEnd = 0x1078, kCfiAt = 0x1078;
constexpr uint64_t kMapStart = 0x555555554000, kStackAt = 0x7ffc00000000;

std::string Uleb(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    s += static_cast<char>(b | (v ? 0x80 : 0));
  } while (v);
  return s;
}

// An entry: u32 length, then `body`, padded with DW_CFA_nop to 4 bytes.
std::string Entry(std::string body) {
  body.resize((body.size() + 3) / 4 * 4, '\0');
  std::string e;
  Put<uint32_t>(&e, static_cast<uint32_t>(body.size()));
  return e + body;
}

// The x86-64 CIE gcc writes: "zR", code 1, data -8, RA 16, FDE pointers
// pcrel|sdata4; CFA = rsp + 8, RA at CFA - 8.
std::string EhCie() {
  std::string b;
  Put<uint32_t>(&b, 0);  // CIE id
  b += std::string("\x01zR\0", 4) + Uleb(1) + "\x78" "\x10" + Uleb(1) + "\x1b";
  b += std::string("\x0c\x07\x08\x90\x01", 5);
  return Entry(b);
}

// An .eh_frame FDE for [begin, end) at section offset `at` (CIE at 0).
std::string EhFde(uint64_t at, uint64_t begin, uint64_t end, const std::string& insns) {
  std::string b;
  Put<uint32_t>(&b, static_cast<uint32_t>(at + 4));  // back to the CIE
  Put<int32_t>(&b, static_cast<int32_t>(begin - (kCfiAt + at + 8)));
  Put<uint32_t>(&b, static_cast<uint32_t>(end - begin));
  return Entry(b + Uleb(0) + insns);
}

// push %rbp; mov %rsp,%rbp: CFA = rbp + 16, rbp at CFA - 16.
const std::string kFramePrologue("\x41\x0e\x10\x86\x02\x43\x0d\x06", 8);
// glibc's PLT CFA expression: rsp + 8 + ((rip & 15) >= 11 ? 8 : 0)
// (DW_OP_breg7 8, DW_OP_breg16 0, lit15, and, lit11, ge, lit3, shl, plus).
const std::string kPltExpression("\x77\x08\x80\x00\x3f\x1a\x3b\x2a\x33\x24\x22", 11);

// Header, registers and the stack of a sample at `pc` whose frames are a
// chain of (saved rbp, return address) pairs, each return address inside
// the first function.
std::string Sample(uint16_t cfi_size, uint16_t hdr_size, uint16_t pc, uint16_t flags,
                   std::string* stack) {
  std::string s;
  for (uint16_t v : {cfi_size, hdr_size, pc, flags}) Put(&s, v);
  std::vector<uint64_t> regs(17, 0);
  regs[6] = kStackAt + 0x20;  // rbp
  for (size_t i = 0; i < regs.size(); ++i) Put(&s, regs[i]);
  stack->assign(0x200, '\0');
  const uint64_t leaf_ra = kMapStart + kTextAt + 0x10;  // where a PLT-like CFA finds it
  std::memcpy(stack->data(), &leaf_ra, 8);
  std::memcpy(stack->data() + 8, &leaf_ra, 8);
  for (uint64_t frame = 0x20, n = 0; frame + 0x40 <= stack->size(); frame += 0x40, ++n) {
    const uint64_t saved_rbp = kStackAt + frame + 0x40, ra = kMapStart + kTextAt + 0x10 + n;
    std::memcpy(stack->data() + frame, &saved_rbp, 8);
    std::memcpy(stack->data() + frame + 8, &ra, 8);
  }
  return s;
}

void UnwindSeeds(const fs::path& dir) {
  // Two functions: [0x78, 0x878) with a frame pointer, [0x878, 0x1078) PLT-like.
  std::string eh = EhCie();
  eh += EhFde(eh.size(), kTextAt, kTextAt + 0x800, kFramePrologue);
  const uint64_t fde1 = EhCie().size();
  const uint64_t fde2 = eh.size();
  eh += EhFde(eh.size(), kTextAt + 0x800, kTextEnd, std::string("\x0f", 1) + Uleb(kPltExpression.size()) +
                                                       kPltExpression);
  Put<uint32_t>(&eh, 0);  // terminator
  std::string stack;
  std::string head = Sample(eh.size(), 0, kTextAt + 0x10, 0, &stack);
  Write(dir, "eh-frame-fp.seed", head + eh + stack);
  head = Sample(eh.size(), 0, kTextAt + 0x900, 0, &stack);
  Write(dir, "eh-frame-expression.seed", head + eh + stack);

  // .eh_frame_hdr after it (8-aligned): version 1, eh_frame_ptr pcrel|sdata4,
  // count udata4, table datarel|sdata4, sorted by initial location.
  const uint64_t hdr_at = (kCfiAt + eh.size() + 7) / 8 * 8;
  std::string hdr("\x01\x1b\x03\x3b", 4);
  Put<int32_t>(&hdr, static_cast<int32_t>(kCfiAt - (hdr_at + 4)));
  Put<uint32_t>(&hdr, 2);
  for (auto [pc, fde] : {std::pair<uint64_t, uint64_t>{kTextAt, fde1}, {kTextAt + 0x800, fde2}}) {
    Put<int32_t>(&hdr, static_cast<int32_t>(pc - hdr_at));
    Put<int32_t>(&hdr, static_cast<int32_t>(kCfiAt + fde - hdr_at));
  }
  std::string padded = eh;
  padded.resize(hdr_at - kCfiAt, '\0');
  head = Sample(padded.size(), hdr.size(), kTextAt + 0x10, 0, &stack);
  Write(dir, "eh-frame-hdr.seed", head + padded + hdr + stack);

  // .debug_frame: CIE id 0xffffffff, version 1, absolute 8-byte addresses.
  std::string cie;
  Put<uint32_t>(&cie, 0xffffffff);
  cie += std::string("\x01\0", 2) + Uleb(1) + "\x78" "\x10" + std::string("\x0c\x07\x08\x90\x01", 5);
  std::string df = Entry(cie), fde;
  Put<uint32_t>(&fde, 0);  // the CIE's offset
  Put<uint64_t>(&fde, kTextAt);
  Put<uint64_t>(&fde, kTextEnd - kTextAt);
  df += Entry(fde + kFramePrologue);
  head = Sample(df.size(), 0, kTextAt + 0x10, 1, &stack);
  Write(dir, "debug-frame.seed", head + df + stack);
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path root = argc > 1 ? argv[1] : ".";
  const fs::path corpus = root / "tests/fuzz/corpus";
  CoreSeeds(corpus / "core_file");
  CompressedSeeds(corpus / "compressed_records", root);
  UnwindSeeds(corpus / "unwind_cfi");
  return 0;
}
