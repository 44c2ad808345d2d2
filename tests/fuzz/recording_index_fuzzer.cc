// libFuzzer target: the body of a recording's index (TRACE.index, after its
// header and zstd frame: replay/recording_file.h) through
// RecordingFile::DecodeBody, then every region the decoded index holds
// checked as a replay's are (trace_invariants.h). The same body is read
// again as a load streams it (a StreamReader refilled a few bytes at a
// time, so that every value and string is cut across pieces somewhere):
// the same verdict, the same message. Seeds: bodies of bundled traces'
// indexes (corpus/recording_index, written by tests/fuzz/make_index_seeds.sh).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "processor/base/piece_source_for_test.h"
#include "processor/base/stream_reader.h"
#include "processor/replay/recording_file.h"
#include "tests/fuzz/trace_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pageblame::symbols::SymbolizerOptions symbols;
  // No file lookups may find a real binary: each names one only by a path
  // under this (missing) tree.
  symbols.symfs = "/nonexistent-fuzz-symfs";
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto trace = pageblame::replay::RecordingFile::DecodeBody(body, "fuzz", symbols);
  if (trace.ok()) pageblame::fuzz::CheckRegions((*trace)->index());
  // The input handed out a few bytes at a time (1 to 16, as its length says).
  pageblame::PieceSource pieces(std::string(body), 1 + size % 16);
  pageblame::StreamReader r(&pieces, size, 16);
  auto streamed = pageblame::replay::RecordingFile::DecodeBody(&r, "fuzz", symbols);
  // Read whole or in pieces, the same bytes are the same verdict.
  if (streamed.ok() != trace.ok() || streamed.status().message() != trace.status().message()) std::abort();
  return 0;
}
