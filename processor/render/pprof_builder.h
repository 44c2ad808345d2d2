// Builds a pprof profile (google/pprof's profile.proto, gzipped, as
// heapprofd, jeprof and Go's profiler write it) from call stacks of a trace:
// what `go tool pprof`, pprof's web view, speedscope, Pyroscope and Grafana
// read.
//
//   PprofBuilder b(trace, {{"mapped", "bytes"}, {"committed", "bytes"}, {"regions", "count"}}, "mapped");
//   b.AddCall(call, {4096, 4096, 1}, {PprofLabel::Num("pid", 6640)});
//   b.AddPseudo({"[before trace]"}, {8192, 0, 1});
//   std::string gz = b.Gzipped();      // write it as profile.pb.gz
//
// Each sample's locations are the call's user frames, leaf first. A frame
// becomes a Location at its ip, in the Mapping the trace's MMAP/MMAP2
// records give for it (file, range, offset and build id, so pprof can find
// the binary and re-symbolize), with a Line naming its function when the
// symbolizer resolved it, after one Line per function inlined there (the
// frames Frame::inlined of unwound stacks); an unresolved frame has no Line
// (pprof shows its address, or symbolizes it from the binary with
// -symbolize=force). Samples with the same locations and labels are merged
// (their values added).
#ifndef PAGEBLAME_RENDER_PPROF_BUILDER_H_
#define PAGEBLAME_RENDER_PPROF_BUILDER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "processor/session/session.h"

namespace pageblame::render {

struct PprofValueType {
  std::string type;  // "mapped"
  std::string unit;  // "bytes", "count"
};

struct PprofLabel {
  std::string key;
  std::string str;  // a string label, or
  int64_t num = 0;  // a numeric one (when str is empty)
  static PprofLabel Str(std::string k, std::string v) { return {std::move(k), std::move(v), 0}; }
  static PprofLabel Num(std::string k, int64_t v) { return {std::move(k), "", v}; }
};

// One sample as PprofBuilder::WriteGzipped asks for it: a call's frames, or
// made-up ones (AddPseudo's) when `call` is not valid.
struct PprofSample {
  EventId call;
  std::vector<std::string> pseudo;
  std::vector<int64_t> values;
  std::vector<PprofLabel> labels;
};

class PprofBuilder {
 public:
  PprofBuilder(const session::Session& trace, std::vector<PprofValueType> types,
               const std::string& default_type);
  ~PprofBuilder();
  PprofBuilder(const PprofBuilder&) = delete;
  PprofBuilder& operator=(const PprofBuilder&) = delete;

  // One value per type, in the order given to the constructor.
  void AddCall(EventId call, const std::vector<int64_t>& values, const std::vector<PprofLabel>& labels = {});
  // A sample whose stack is made-up frames, leaf first ("[before trace]").
  void AddPseudo(const std::vector<std::string>& frames, const std::vector<int64_t>& values,
                 const std::vector<PprofLabel>& labels = {});
  // Free text pprof shows with the profile (what, which trace, when).
  void AddComment(const std::string& text);
  // The serialized profile, gzip-compressed (profile.proto's on-disk form).
  std::string Gzipped() const;
  // The same bytes as AddCall / AddPseudo of sample(0) .. sample(count - 1)
  // in order, then Gzipped(), on a builder given no sample yet, but written
  // to `out` with no sample held: samples come second in the encoding
  // (profile.proto's field 2, after the sample types; the tables they name
  // follow them), so each is encoded as it is written. `sample` is asked
  // for each index twice (the first pass interns the tables and finds the
  // samples that merge), and again for those whose keys' hashes collide;
  // it must answer the same each time. Memory: the tables (strings,
  // functions, locations, mappings) and 16 B a sample during the first
  // pass. False when a write failed.
  bool WriteGzipped(size_t count, absl::FunctionRef<PprofSample(size_t)> sample, std::FILE* out);
  bool WriteGzipped(size_t count, absl::FunctionRef<PprofSample(size_t)> sample, std::string* out);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_PPROF_BUILDER_H_
