// CfiRegisterCheck on .eh_frame bytes built here, and ElfModule refusing a
// file whose CFI names a register far past x86-64's.
#include "processor/unwind/cfi_register_check.h"

#include <elf.h>

#include <string>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/symbols/raw_elf_for_test.h"
#include "processor/unwind/elf_module.h"
#include "processor/unwind/x86_64_registers.h"

namespace pageblame::unwind {
namespace {

std::string Uleb(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    s.push_back(static_cast<char>(v ? b | 0x80 : b));
  } while (v);
  return s;
}

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// One length-prefixed entry, padded with DW_CFA_nop to 8 bytes as GCC does.
std::string Entry(std::string body) {
  while ((body.size() + 4) % 8 != 0) body.push_back('\0');
  return U32(static_cast<uint32_t>(body.size())) + body;
}

// An .eh_frame as GCC writes one: a "zR" CIE (pcrel sdata4 pointers, CFA
// rsp+8, return address at CFA-8), then one FDE for the 0x100 bytes from
// 0x1000 past the section's address, whose instructions are `fde_ops`.
std::string EhFrame(const std::string& fde_ops) {
  std::string cie = U32(0) + std::string("\x01zR\0", 4) + Uleb(1) + "\x78" + "\x10" + Uleb(1) +
                    "\x1b" + "\x0c\x07\x08" + "\x90\x01";
  std::string out = Entry(cie);
  const uint32_t cie_pointer = static_cast<uint32_t>(out.size() + 4);  // back to offset 0
  const int32_t pc = 0x1000 - static_cast<int32_t>(out.size() + 8);  // pcrel: to the section
  std::string fde = U32(cie_pointer) + U32(static_cast<uint32_t>(pc)) + U32(0x100) + Uleb(0) +
                    fde_ops;
  out += Entry(fde);
  return out + U32(0);  // the terminator
}

absl::Status CheckEhFrame(const std::string& bytes) {
  unsigned char ident[EI_NIDENT] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB};
  std::string copy = bytes;
  Elf_Data data{};
  data.d_buf = copy.data();
  data.d_size = copy.size();
  data.d_type = ELF_T_BYTE;
  return CfiRegisterCheck::Check(ident, &data, /*eh_frame=*/true);
}

// DW_CFA_offset_extended REG, 2 (saved at CFA-16).
std::string OffsetExtended(uint64_t reg) { return "\x05" + Uleb(reg) + Uleb(2); }

TEST(CfiRegisterCheckTest, OrdinaryCfiPasses) {
  // push rbp; mov rbp, rsp: CFA rsp+16, rbp at CFA-16, then CFA rbp+16.
  EXPECT_TRUE(CheckEhFrame(EhFrame("\x41\x0e\x10\x86\x02\x43\x0d\x06")).ok());
  // The highest number allowed, as a plain register rule.
  EXPECT_TRUE(CheckEhFrame(EhFrame(OffsetExtended(x86_64::kMaxCfiRegister))).ok());
}

TEST(CfiRegisterCheckTest, RegisterPastTheArchitecturesIsRefusedWithItsOffset) {
  absl::Status s = CheckEhFrame(EhFrame(OffsetExtended(uint64_t{1} << 27)));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at offset 0x18: opcode 0x5 names register 134217728"),
            std::string::npos)
      << s;
  EXPECT_FALSE(CheckEhFrame(EhFrame(OffsetExtended(x86_64::kMaxCfiRegister + 1))).ok());
}

TEST(CfiRegisterCheckTest, EveryRegisterOperandIsChecked) {
  const std::string big = Uleb(1000);
  for (const std::string& ops : {"\x06" + big, "\x07" + big, "\x08" + big, "\x09\x01" + big,
                                 "\x09" + big + "\x01", "\x0c" + big + "\x08",
                                 "\x0d" + big, "\x10" + big + "\x01\x30", "\x11" + big + "\x7f",
                                 "\x14" + big + "\x01", "\x16" + big + "\x01\x30"}) {
    EXPECT_FALSE(CheckEhFrame(EhFrame(ops)).ok()) << std::hex << int(ops[0]);
  }
}

TEST(CfiRegisterCheckTest, CutOperandsAndUnknownOpcodesAreRefused) {
  EXPECT_FALSE(CheckEhFrame(EhFrame("\x05\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01")).ok());
  EXPECT_FALSE(CheckEhFrame(EhFrame("\x0f\x7f")).ok());  // a block past the entry's end
  EXPECT_FALSE(CheckEhFrame(EhFrame("\x3f")).ok());
}

// The fuzz campaign's case: one FDE naming register 2^27, which libdw's CFI
// interpreter grew a 1 GB table for. The file's .eh_frame is not used.
TEST(CfiRegisterCheckTest, ElfModuleRefusesTheFilesCfi) {
  TempDir dir("pb_unwind");
  symbols::testing::RawElf elf;
  elf.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, std::string(0x2000, '\x90'));
  elf.AddSection(".eh_frame", SHT_PROGBITS, SHF_ALLOC, EhFrame(OffsetExtended(uint64_t{1} << 27)));
  symbols::DsoLocation loc;
  loc.elf_path = dir.path() + "/hostile.so";
  {
    std::string image = elf.Build();
    FILE* f = std::fopen(loc.elf_path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(image.data(), 1, image.size(), f);
    std::fclose(f);
  }
  std::unique_ptr<ElfModule> m = ElfModule::Open(loc);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->has_cfi());
  // RawElf puts .eh_frame at 0x2078 (after 0x2000 bytes of .text at 0x78):
  // its FDE covers 0x3078.. (libdw took 0.8 s and 1 GB to answer this).
  EXPECT_EQ(m->FrameAt(0x3088), nullptr);
  EXPECT_NE(m->cfi_refused().find("hostile.so: .eh_frame: CFI entry at offset 0x18"),
            std::string::npos)
      << m->cfi_refused();
}

}  // namespace
}  // namespace pageblame::unwind
