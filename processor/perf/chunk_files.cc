#include "processor/perf/chunk_files.h"

#include <dirent.h>

#include <algorithm>
#include <memory>

namespace pageblame::perf {

bool ChunkFiles::IsChunkOf(std::string_view name, std::string_view trace_name) {
  if (name.size() != trace_name.size() + 1 + kStampDigits) return false;
  if (name.substr(0, trace_name.size()) != trace_name || name[trace_name.size()] != '.') return false;
  for (char c : name.substr(trace_name.size() + 1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::vector<std::string> ChunkFiles::Of(const std::string& trace) {
  const size_t slash = trace.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : trace.substr(0, slash == 0 ? 1 : slash);
  const std::string base = slash == std::string::npos ? trace : trace.substr(slash + 1);
  const std::string prefix = slash == std::string::npos ? "" : trace.substr(0, slash + 1);
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (d == nullptr || base.empty()) return out;
  while (const dirent* e = ::readdir(d.get())) {
    if (IsChunkOf(e->d_name, base)) out.push_back(prefix + e->d_name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace pageblame::perf
