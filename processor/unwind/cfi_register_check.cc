#include "processor/unwind/cfi_register_check.h"

#include <dwarf.h>
#include <elf.h>

#include <cstring>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "processor/unwind/x86_64_registers.h"

namespace pageblame::unwind {
namespace {

// Bytes [p, end) of an entry, read forward; every read fails at the end.
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;

  bool Skip(uint64_t n) {
    if (n > static_cast<uint64_t>(end - p)) return false;
    p += n;
    return true;
  }
  bool Byte(uint8_t* out) {
    if (p == end) return false;
    *out = *p++;
    return true;
  }
  // ULEB128 and SLEB128 alike: the value only matters for registers and
  // lengths, which are unsigned. More than 64 bits is corrupt.
  bool Leb(uint64_t* out) {
    *out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!Byte(&b)) return false;
      *out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
};

// Skips a pointer in DW_EH_PE encoding `enc` (LSB's .eh_frame format; the
// high bits say what it is relative to, not how big it is).
bool SkipEncoded(Cursor* c, uint8_t enc, int addr_size) {
  if ((enc & 0x70) == DW_EH_PE_aligned) return false;
  uint64_t v;
  switch (enc & 0x0f) {
    case DW_EH_PE_absptr: return c->Skip(addr_size);
    case DW_EH_PE_uleb128:
    case DW_EH_PE_sleb128: return c->Leb(&v);
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2: return c->Skip(2);
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4: return c->Skip(4);
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8: return c->Skip(8);
    default: return false;
  }
}

struct CieInfo {
  uint8_t fde_encoding = DW_EH_PE_absptr;
  bool has_z = false;  // FDEs carry a ULEB128 length of augmentation data
};

// The augmentation letters GCC and LLVM write (z, R, P, L, S); anything else
// without 'z' to skip it cannot be parsed past.
std::optional<CieInfo> ParseAugmentation(const Dwarf_CIE& cie, int addr_size) {
  CieInfo info;
  const char* aug = cie.augmentation;
  if (aug == nullptr || aug[0] == '\0') return info;
  if (aug[0] != 'z') return std::nullopt;
  info.has_z = true;
  Cursor c{cie.augmentation_data, cie.augmentation_data + cie.augmentation_data_size};
  for (const char* a = aug + 1; *a != '\0'; ++a) {
    uint8_t enc;
    switch (*a) {
      case 'R':
        if (!c.Byte(&info.fde_encoding)) return std::nullopt;
        break;
      case 'P':
        if (!c.Byte(&enc) || !SkipEncoded(&c, enc, addr_size)) return std::nullopt;
        break;
      case 'L':
        if (!c.Byte(&enc)) return std::nullopt;
        break;
      case 'S':
      case 'B':
        break;
      default:
        return info;  // 'z' sized the data: libdw skips the rest as well
    }
  }
  return info;
}

bool RegisterOk(uint64_t reg) { return reg <= x86_64::kMaxCfiRegister; }

// The CFA instructions in [c.p, c.end): "" if every register they name is in
// range, else why not. Operands as DWARF 5 section 6.4.2 and the GNU
// extensions libdw knows.
std::string CheckInstructions(Cursor c, const CieInfo& info, int addr_size) {
  uint64_t reg = 0, v = 0;
  while (c.p != c.end) {
    const uint8_t op = *c.p++;
    bool ok = true;
    bool has_reg = false;
    switch (op & 0xc0) {
      case DW_CFA_advance_loc: continue;
      case DW_CFA_offset: ok = c.Leb(&v); break;  // a 6-bit register
      case DW_CFA_restore: continue;
      default: break;
    }
    if ((op & 0xc0) == 0) {
      switch (op) {
        case DW_CFA_nop:
        case DW_CFA_remember_state:
        case DW_CFA_restore_state:
        case DW_CFA_GNU_window_save: break;
        case DW_CFA_set_loc: ok = SkipEncoded(&c, info.fde_encoding, addr_size); break;
        case DW_CFA_advance_loc1: ok = c.Skip(1); break;
        case DW_CFA_advance_loc2: ok = c.Skip(2); break;
        case DW_CFA_advance_loc4: ok = c.Skip(4); break;
        case DW_CFA_def_cfa_offset:
        case DW_CFA_def_cfa_offset_sf:
        case DW_CFA_GNU_args_size: ok = c.Leb(&v); break;
        case DW_CFA_def_cfa_expression: ok = c.Leb(&v) && c.Skip(v); break;
        case DW_CFA_restore_extended:
        case DW_CFA_undefined:
        case DW_CFA_same_value:
        case DW_CFA_def_cfa_register:
          has_reg = true;
          ok = c.Leb(&reg);
          break;
        case DW_CFA_offset_extended:
        case DW_CFA_offset_extended_sf:
        case DW_CFA_def_cfa:
        case DW_CFA_def_cfa_sf:
        case DW_CFA_val_offset:
        case DW_CFA_val_offset_sf:
        case DW_CFA_GNU_negative_offset_extended:
          has_reg = true;
          ok = c.Leb(&reg) && c.Leb(&v);
          break;
        case DW_CFA_register:  // both are registers
          has_reg = true;
          ok = c.Leb(&reg) && c.Leb(&v) && RegisterOk(v);
          break;
        case DW_CFA_expression:
        case DW_CFA_val_expression:
          has_reg = true;
          ok = c.Leb(&reg) && c.Leb(&v) && c.Skip(v);
          break;
        default:
          return absl::StrFormat("unknown CFA opcode 0x%x", op);
      }
    }
    if (!ok) return absl::StrFormat("opcode 0x%x: operand cut short or out of range", op);
    if (has_reg && !RegisterOk(reg)) {
      return absl::StrFormat("opcode 0x%x names register %u (at most %u)", op, reg,
                             x86_64::kMaxCfiRegister);
    }
  }
  return "";
}

}  // namespace

namespace {

absl::Status Bad(uint64_t offset, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("CFI entry at offset 0x%x: %s", offset, why));
}

// Every entry of the section in turn: fn(offset, entry) until it fails.
template <typename Fn>
absl::Status ForEachEntry(const unsigned char* e_ident, Elf_Data* data, bool eh_frame, Fn fn) {
  Dwarf_Off offset = 0;
  while (offset < data->d_size) {
    Dwarf_Off next = 0;
    Dwarf_CFI_Entry entry;
    const int r = dwarf_next_cfi(e_ident, data, eh_frame, offset, &next, &entry);
    if (r > 0) return absl::OkStatus();  // the terminator
    if (r < 0) return Bad(offset, "does not parse");
    if (absl::Status s = fn(offset, entry); !s.ok()) return s;
    if (next <= offset) return Bad(offset, "does not advance");
    offset = next;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CfiRegisterCheck::Check(const unsigned char* e_ident, Elf_Data* data,
                                     bool eh_frame) {
  if (e_ident == nullptr || data == nullptr || data->d_buf == nullptr) return absl::OkStatus();
  const int addr_size = e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
  // CIEs first (an FDE may point back or forward to its CIE).
  absl::flat_hash_map<Dwarf_Off, CieInfo> cies;
  absl::Status s = ForEachEntry(e_ident, data, eh_frame, [&](Dwarf_Off off,
                                                             const Dwarf_CFI_Entry& e) {
    if (e.CIE_id != LIBDW_CIE_ID) return absl::OkStatus();
    std::optional<CieInfo> info = ParseAugmentation(e.cie, addr_size);
    if (!info) return Bad(off, "augmentation not understood");
    if (!RegisterOk(e.cie.return_address_register)) return Bad(off, "return address register");
    const std::string why = CheckInstructions(
        Cursor{e.cie.initial_instructions, e.cie.initial_instructions_end}, *info, addr_size);
    if (!why.empty()) return Bad(off, why);
    cies[off] = *info;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return ForEachEntry(e_ident, data, eh_frame, [&](Dwarf_Off off, const Dwarf_CFI_Entry& e) {
    if (e.CIE_id == LIBDW_CIE_ID) return absl::OkStatus();
    auto cie = cies.find(e.fde.CIE_pointer);
    if (cie == cies.end()) return Bad(off, "FDE without a CIE");
    Cursor c{e.fde.start, e.fde.end};
    uint64_t aug_len = 0;
    // initial_location and address_range, then the augmentation data.
    if (!SkipEncoded(&c, cie->second.fde_encoding, addr_size) ||
        !SkipEncoded(&c, cie->second.fde_encoding & 0x0f, addr_size) ||
        (cie->second.has_z && !(c.Leb(&aug_len) && c.Skip(aug_len)))) {
      return Bad(off, "FDE header cut short");
    }
    const std::string why = CheckInstructions(c, cie->second, addr_size);
    return why.empty() ? absl::OkStatus() : Bad(off, why);
  });
}

}  // namespace pageblame::unwind
