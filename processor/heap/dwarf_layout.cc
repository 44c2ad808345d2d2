#include "processor/heap/dwarf_layout.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"

namespace pageblame::heap {
namespace {

// One struct's members: name -> {offset, byte size of the member's type}.
struct Members {
  uint64_t size = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> fields;
};

// The wanted structs found so far, by name.
using Found = std::map<std::string, Members>;

Members ReadMembers(Dwarf_Die* die) {
  Members m;
  Dwarf_Word size = 0;
  Dwarf_Attribute attr;
  if (dwarf_attr(die, DW_AT_byte_size, &attr) && dwarf_formudata(&attr, &size) == 0) m.size = size;
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) return m;
  do {
    if (dwarf_tag(&child) != DW_TAG_member) continue;
    const char* name = dwarf_diename(&child);
    Dwarf_Word off = 0;
    if (name == nullptr || !dwarf_attr(&child, DW_AT_data_member_location, &attr) ||
        dwarf_formudata(&attr, &off) != 0)
      continue;
    Dwarf_Die type;
    Dwarf_Word bytes = 0;
    if (dwarf_attr(&child, DW_AT_type, &attr) && dwarf_formref_die(&attr, &type)) {
      dwarf_aggregate_size(&type, &bytes);
    }
    m.fields[name] = {off, bytes};
  } while (dwarf_siblingof(&child, &child) == 0);
  return m;
}

// Collects the wanted struct definitions among a unit's top-level DIEs.
void ScanUnit(Dwarf_Die* cu, Found* found) {
  static const char* kWanted[] = {"malloc_state", "malloc_par", "_heap_info", "tcache_perthread_struct",
                                  "tcache_entry"};
  Dwarf_Die die;
  if (dwarf_child(cu, &die) != 0) return;
  do {
    if (dwarf_tag(&die) != DW_TAG_structure_type || dwarf_hasattr(&die, DW_AT_declaration)) continue;
    const char* name = dwarf_diename(&die);
    if (name == nullptr) continue;
    for (const char* w : kWanted) {
      if (std::strcmp(name, w) == 0 && !found->count(w)) (*found)[w] = ReadMembers(&die);
    }
  } while (dwarf_siblingof(&die, &die) == 0);
}

// Scans malloc.c's unit first; then every unit, if something is missing.
absl::Status FindStructs(Dwarf* dw, Found* found) {
  for (int pass = 0; pass < 2 && found->size() < 5; ++pass) {
    Dwarf_Off off = 0, next;
    size_t header = 0;
    while (dwarf_nextcu(dw, off, &next, &header, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die cu;
      if (dwarf_offdie(dw, off + header, &cu) != nullptr) {
        const char* name = dwarf_diename(&cu);
        if (pass == 1 || (name != nullptr && absl::EndsWith(name, "malloc/malloc.c"))) ScanUnit(&cu, found);
      }
      off = next;
    }
  }
  return absl::OkStatus();
}

class Fields {
 public:
  Fields(const Found& found, std::string path) : found_(found), path_(std::move(path)) {}
  // The offset of `s.field`; records the first one missing.
  uint64_t Off(const std::string& s, const std::string& field) { return Get(s, field).first; }
  uint64_t Bytes(const std::string& s, const std::string& field) { return Get(s, field).second; }
  std::optional<uint64_t> Optional(const std::string& s, const std::string& field) {
    auto it = found_.find(s);
    if (it == found_.end() || !it->second.fields.count(field)) return std::nullopt;
    return it->second.fields.at(field).first;
  }
  uint64_t Size(const std::string& s) {
    auto it = found_.find(s);
    if (it == found_.end()) return Missing(s, ""), 0;
    return it->second.size;
  }
  absl::Status status() const { return status_; }

 private:
  std::pair<uint64_t, uint64_t> Get(const std::string& s, const std::string& field) {
    auto it = found_.find(s);
    if (it == found_.end() || !it->second.fields.count(field)) return Missing(s, field), std::make_pair(0, 0);
    return it->second.fields.at(field);
  }
  void Missing(const std::string& s, const std::string& field) {
    if (!status_.ok()) return;
    status_ = absl::NotFoundError(absl::StrCat(path_, ": no ", field.empty() ? "" : field + " in ", "struct ", s,
                                               " in its DWARF"));
  }
  const Found& found_;
  std::string path_;
  absl::Status status_;
};

void SetFromDwarf(Fields& f, GlibcLayout* l) {
  l->state_size = f.Size("malloc_state");
  l->state_flags = f.Off("malloc_state", "flags");
  l->state_fastbins = f.Off("malloc_state", "fastbinsY");
  l->nfastbins = static_cast<uint32_t>(f.Bytes("malloc_state", "fastbinsY") / 8);
  l->state_top = f.Off("malloc_state", "top");
  l->state_bins = f.Off("malloc_state", "bins");
  l->nbins = static_cast<uint32_t>(f.Bytes("malloc_state", "bins") / 16 + 1);
  l->state_next = f.Off("malloc_state", "next");
  l->state_attached_threads = f.Off("malloc_state", "attached_threads");
  l->state_system_mem = f.Off("malloc_state", "system_mem");
  l->par_size = f.Size("malloc_par");
  l->par_trim_threshold = f.Off("malloc_par", "trim_threshold");
  l->par_top_pad = f.Off("malloc_par", "top_pad");
  l->par_mmap_threshold = f.Off("malloc_par", "mmap_threshold");
  l->par_arena_test = f.Off("malloc_par", "arena_test");
  l->par_arena_max = f.Off("malloc_par", "arena_max");
  l->par_thp_pagesize = f.Optional("malloc_par", "thp_pagesize");
  l->par_hp_pagesize = f.Optional("malloc_par", "hp_pagesize");
  l->par_n_mmaps = f.Off("malloc_par", "n_mmaps");
  l->par_mmapped_mem = f.Off("malloc_par", "mmapped_mem");
  l->par_sbrk_base = f.Off("malloc_par", "sbrk_base");
  l->par_tcache_bins = f.Off("malloc_par", "tcache_bins");
  l->par_tcache_max_bytes = f.Off("malloc_par", "tcache_max_bytes");
  l->par_tcache_count = f.Off("malloc_par", "tcache_count");
  l->heap_info_size = f.Size("_heap_info");
  l->heap_ar_ptr = f.Off("_heap_info", "ar_ptr");
  l->heap_prev = f.Off("_heap_info", "prev");
  l->heap_size = f.Off("_heap_info", "size");
  l->heap_mprotect_size = f.Off("_heap_info", "mprotect_size");
  l->tcache_struct_size = f.Size("tcache_perthread_struct");
  l->tcache_entries = f.Off("tcache_perthread_struct", "entries");
  l->tcache_bins = static_cast<uint32_t>(f.Bytes("tcache_perthread_struct", "entries") / 8);
  const uint64_t counts = f.Bytes("tcache_perthread_struct", "counts");
  l->tcache_count_bytes = l->tcache_bins ? static_cast<uint32_t>(counts / l->tcache_bins) : 0;
  if (auto key = f.Optional("tcache_entry", "key")) l->tcache_entry_key = *key;
}

}  // namespace

absl::StatusOr<GlibcLayout> DwarfLayout::Read(const std::string& debug_path, int major, int minor) {
  const int fd = open(debug_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(debug_path, ": cannot open: ", std::strerror(errno)));
  Dwarf* dw = dwarf_begin(fd, DWARF_C_READ);
  if (dw == nullptr) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(debug_path, ": no readable DWARF: ", dwarf_errmsg(-1)));
  }
  Found found;
  absl::Status s = FindStructs(dw, &found);
  GlibcLayout l;
  l.major = major;
  l.minor = minor;
  Fields f(found, debug_path);
  SetFromDwarf(f, &l);
  dwarf_end(dw);
  close(fd);
  RETURN_IF_ERROR(s);
  RETURN_IF_ERROR(f.status());
  if (l.tcache_count_bytes != 1 && l.tcache_count_bytes != 2)
    return absl::InvalidArgumentError(absl::StrCat(debug_path, ": tcache counts of ", l.tcache_count_bytes,
                                                   " bytes each (expected 1 or 2)"));
  SetVersionRules(&l);
  return l;
}

}  // namespace pageblame::heap
