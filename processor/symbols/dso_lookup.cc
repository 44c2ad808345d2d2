#include "processor/symbols/dso_lookup.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace pageblame::symbols {

FileStamp FileStamp::Of(const std::string& path) {
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return {};
  return FileStamp{static_cast<uint64_t>(st.st_size),
                   static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000 + static_cast<uint64_t>(st.st_mtim.tv_nsec)};
}

DsoLookup DsoLookup::Of(std::string_view path, std::string_view build_id, const DsoLocation& where) {
  DsoLookup l;
  l.path = std::string(path);
  l.build_id = std::string(build_id);
  l.elf_path = where.elf_path;
  l.debug_path = where.debug_path;
  l.elf = FileStamp::Of(where.elf_path);
  l.debug = FileStamp::Of(where.debug_path);
  return l;
}

std::string DsoLookup::Changed(const DsoLocator& locator) const {
  const DsoLocation now = locator.Locate(path, build_id);
  if (now.elf_path != elf_path || now.debug_path != debug_path) {
    return absl::StrCat(path, " is found as '", now.elf_path, "' now, was '", elf_path, "'");
  }
  if (!(FileStamp::Of(elf_path) == elf) || !(FileStamp::Of(debug_path) == debug)) {
    return absl::StrCat(elf_path.empty() ? debug_path : elf_path, " changed");
  }
  return "";
}

}  // namespace pageblame::symbols
