// libFuzzer target: the body of a recording's index (TRACE.index, after its
// header and zstd frame: replay/recording_file.h) through
// RecordingFile::DecodeBody, then every region the decoded index holds
// checked as a replay's are (trace_invariants.h). Seeds: bodies of bundled
// traces' indexes (corpus/recording_index, written by
// tests/fuzz/make_index_seeds.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "processor/replay/recording_file.h"
#include "tests/fuzz/trace_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pageblame::symbols::SymbolizerOptions symbols;
  // No file lookups may find a real binary: each names one only by a path
  // under this (missing) tree.
  symbols.symfs = "/nonexistent-fuzz-symfs";
  auto trace = pageblame::replay::RecordingFile::DecodeBody(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", symbols);
  if (trace.ok()) pageblame::fuzz::CheckRegions((*trace)->index());
  return 0;
}
