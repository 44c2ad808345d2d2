#include "processor/render/pprof_builder.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "processor/render/origin_renderer.h"
#include "processor/symbols/build_id.h"
#include "profile.pb.h"

namespace pageblame::render {

namespace pb = perftools::profiles;

namespace {

// A FILE* as protobuf's output: what the gzip stream writes goes on to it.
class FileCopyingStream : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit FileCopyingStream(std::FILE* f) : f_(f) {}
  bool Write(const void* buffer, int size) override {
    return std::fwrite(buffer, 1, static_cast<size_t>(size), f_) == static_cast<size_t>(size);
  }

 private:
  std::FILE* f_;
};

// What makes two samples one (AddSample merges them): the same locations
// and the same labels, by their string ids (a number label's str is 0).
struct SampleKey {
  std::vector<uint64_t> locations;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> labels;  // key, str, num
  bool operator==(const SampleKey& o) const { return locations == o.locations && labels == o.labels; }
  template <typename H>
  friend H AbslHashValue(H h, const SampleKey& k) {
    return H::combine(std::move(h), k.locations, k.labels);
  }
};

using SampleFn = absl::FunctionRef<PprofSample(size_t)>;

}  // namespace

class PprofBuilder::Impl {
 public:
  Impl(const session::Session& trace, std::vector<PprofValueType> types, const std::string& default_type)
      : idx_(trace.index()), sym_(trace.symbolizer()), renderer_(trace.frames()), num_values_(types.size()) {
    Str("");  // string_table[0] must be ""
    for (const PprofValueType& t : types) {
      pb::ValueType* v = profile_.add_sample_type();
      v->set_type(Str(t.type));
      v->set_unit(Str(t.unit));
    }
    profile_.set_default_sample_type(Str(default_type));
  }

  void AddCall(EventId call, const std::vector<int64_t>& values, const std::vector<PprofLabel>& labels) {
    auto [it, inserted] = call_locations_.try_emplace(call);
    if (inserted) it->second = CallLocations(idx_.event(call));
    AddSample(it->second, values, labels);
  }

  void AddPseudo(const std::vector<std::string>& frames, const std::vector<int64_t>& values,
                 const std::vector<PprofLabel>& labels) {
    std::vector<uint64_t> locations;
    for (const std::string& name : frames) locations.push_back(LocationId(0, 0, {FunctionId(name)}));
    AddSample(locations, values, labels);
  }

  void AddComment(const std::string& text) { profile_.add_comment(Str(text)); }

  // WriteGzipped's: the samples found merged first (interning the tables
  // in AddCall's order), then the profile's fields in their numbers' order,
  // as SerializeToZeroCopyStream of the whole would write them.
  bool WriteGzipped(size_t count, SampleFn sample, google::protobuf::io::ZeroCopyOutputStream* raw) {
    FindMerges(count, sample);
    google::protobuf::io::GzipOutputStream::Options o;
    o.format = google::protobuf::io::GzipOutputStream::GZIP;
    google::protobuf::io::GzipOutputStream gz(raw, o);
    pb::Profile part;  // a field or one sample at a time
    *part.mutable_sample_type() = profile_.sample_type();
    bool ok = part.SerializeToZeroCopyStream(&gz);
    part.Clear();
    for (size_t i = 0; i < count && ok; ++i) {
      if (merged_away_.contains(i)) continue;
      part.clear_sample();
      pb::Sample* ps = part.add_sample();
      const PprofSample s = sample(i);
      NewSample(KeyOf(s), ps);
      AddValues(s.values, ps);
      if (auto m = merged_.find(i); m != merged_.end()) {
        for (size_t j : m->second) AddValues(sample(j).values, ps);
      }
      ok = part.SerializeToZeroCopyStream(&gz);
    }
    part = profile_;
    part.clear_sample_type();
    SetHasFunctions(&part);
    ok = ok && part.SerializeToZeroCopyStream(&gz);
    return gz.Close() && ok;
  }

  std::string Gzipped() const {
    pb::Profile p = profile_;
    SetHasFunctions(&p);
    std::string out;
    {
      google::protobuf::io::StringOutputStream raw(&out);
      google::protobuf::io::GzipOutputStream::Options o;
      o.format = google::protobuf::io::GzipOutputStream::GZIP;
      google::protobuf::io::GzipOutputStream gz(&raw, o);
      p.SerializeToZeroCopyStream(&gz);
      gz.Close();
    }
    return out;
  }

 private:
  // A mapping whose every location is named needs no symbolization;
  // pprof symbolizes the others from the binary when it finds it.
  void SetHasFunctions(pb::Profile* p) const {
    for (pb::Mapping& m : *p->mutable_mapping()) m.set_has_functions(!unnamed_mappings_.contains(m.id()));
  }

  int64_t Str(const std::string& s) {
    auto [it, inserted] = strings_.try_emplace(s, profile_.string_table_size());
    if (inserted) profile_.add_string_table(s);
    return it->second;
  }

  uint64_t MappingId(const symbols::Symbolizer::Mapping& m) {
    auto key = std::make_tuple(m.path, m.start, m.end, m.pgoff, m.build_id);
    auto [it, inserted] = mappings_.try_emplace(key, profile_.mapping_size() + 1);
    if (inserted) {
      pb::Mapping* pm = profile_.add_mapping();
      pm->set_id(it->second);
      pm->set_memory_start(m.start);
      pm->set_memory_limit(m.end);
      pm->set_file_offset(m.pgoff);
      pm->set_filename(Str(m.path));
      pm->set_build_id(Str(symbols::BuildIdToHex(m.build_id)));
    }
    return it->second;
  }

  uint64_t FunctionId(const std::string& name) {
    auto [it, inserted] = functions_.try_emplace(name, profile_.function_size() + 1);
    if (inserted) {
      pb::Function* f = profile_.add_function();
      f->set_id(it->second);
      f->set_name(Str(name));
      f->set_system_name(Str(name));
    }
    return it->second;
  }

  // `functions`: the location's Lines, innermost first (the functions
  // inlined at `address`, then the one holding it, as profile.proto orders
  // them); empty for an unresolved frame.
  uint64_t LocationId(uint64_t mapping, uint64_t address, const std::vector<uint64_t>& functions) {
    auto [it, inserted] = locations_.try_emplace(std::make_tuple(mapping, address, functions),
                                                 profile_.location_size() + 1);
    if (inserted) {
      pb::Location* l = profile_.add_location();
      l->set_id(it->second);
      l->set_mapping_id(mapping);
      l->set_address(address);
      for (uint64_t f : functions) l->add_line()->set_function_id(f);
    }
    return it->second;
  }

  std::vector<uint64_t> CallLocations(const index::CallEvent& ev) {
    std::vector<uint64_t> out;
    const std::vector<symbols::Frame> frames = renderer_.Frames(ev);  // a copy: Frames' answer is short-lived
    std::vector<uint64_t> functions;  // of the inlined frames before the current ip's own
    for (const symbols::Frame& f : frames) {
      const bool named = f.symbol && !f.symbol->empty();
      if (named) functions.push_back(FunctionId(*f.symbol));
      // Inlined frames (unwound stacks) come before their ip's own frame:
      // one location with a line each.
      if (f.inlined) continue;
      std::optional<symbols::Symbolizer::Mapping> m = sym_.MappingOf(ev.pid, ev.time, f.ip);
      const uint64_t mapping = m ? MappingId(*m) : 0;
      if (!named && mapping != 0) unnamed_mappings_[mapping] = true;
      out.push_back(LocationId(mapping, f.ip, functions));
      functions.clear();
    }
    if (out.empty()) out.push_back(LocationId(0, 0, {FunctionId("[no user stack]")}));
    return out;
  }

  void AddSample(const std::vector<uint64_t>& locations, const std::vector<int64_t>& values,
                 const std::vector<PprofLabel>& labels) {
    std::string key;
    for (uint64_t l : locations) absl::StrAppend(&key, l, ",");
    for (const PprofLabel& l : labels) absl::StrAppend(&key, "|", l.key, "=", l.str, "#", l.num);
    auto [it, inserted] = samples_.try_emplace(key, profile_.sample_size());
    if (inserted) NewSample(SampleKey{locations, LabelIds(labels)}, profile_.add_sample());
    AddValues(values, profile_.mutable_sample(it->second));
  }

  // The labels' string ids, interned in the order AddSample interns them.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> LabelIds(const std::vector<PprofLabel>& labels) {
    std::vector<std::tuple<int64_t, int64_t, int64_t>> ids;
    for (const PprofLabel& l : labels) {
      const int64_t key = Str(l.key);
      ids.emplace_back(key, l.str.empty() ? 0 : Str(l.str), l.num);
    }
    return ids;
  }

  // A sample's key, its locations and labels interned (AddCall's and
  // AddPseudo's order).
  SampleKey KeyOf(const PprofSample& s) {
    SampleKey k;
    if (s.call.valid()) {
      k.locations = CallLocations(idx_.event(s.call));
    } else {
      for (const std::string& name : s.pseudo) k.locations.push_back(LocationId(0, 0, {FunctionId(name)}));
    }
    k.labels = LabelIds(s.labels);
    return k;
  }

  // Its locations, values of 0 and labels.
  void NewSample(const SampleKey& k, pb::Sample* s) const {
    for (uint64_t l : k.locations) s->add_location_id(l);
    for (size_t i = 0; i < num_values_; ++i) s->add_value(0);
    for (const auto& [key, str, num] : k.labels) {
      pb::Label* pl = s->add_label();
      pl->set_key(key);
      if (str == 0) {
        pl->set_num(num);
      } else {
        pl->set_str(str);
      }
    }
  }

  void AddValues(const std::vector<int64_t>& values, pb::Sample* s) const {
    for (size_t i = 0; i < num_values_ && i < values.size(); ++i) s->set_value(i, s->value(i) + values[i]);
  }

  // Which of `count` samples merge into an earlier one (AddSample's rule),
  // found with 16 B a sample: their keys' hashes sorted, the keys of equal
  // hashes made again and compared whole. Interns every table on the way.
  void FindMerges(size_t count, SampleFn sample) {
    std::vector<std::pair<size_t, size_t>> hashes;  // (hash of its key, sample)
    hashes.reserve(count);
    for (size_t i = 0; i < count; ++i) hashes.emplace_back(absl::Hash<SampleKey>{}(KeyOf(sample(i))), i);
    std::sort(hashes.begin(), hashes.end());
    for (size_t a = 0; a < hashes.size();) {
      size_t b = a + 1;
      while (b < hashes.size() && hashes[b].first == hashes[a].first) ++b;
      // A run of equal hashes, its samples in order: the first of each key stays.
      std::vector<std::pair<SampleKey, size_t>> firsts;
      for (size_t k = a; b - a > 1 && k < b; ++k) {
        SampleKey key = KeyOf(sample(hashes[k].second));
        auto it = std::find_if(firsts.begin(), firsts.end(), [&](const auto& f) { return f.first == key; });
        if (it == firsts.end()) {
          firsts.emplace_back(std::move(key), hashes[k].second);
        } else {
          merged_[it->second].push_back(hashes[k].second);
          merged_away_.insert(hashes[k].second);
        }
      }
      a = b;
    }
  }

  const index::TraceIndex& idx_;
  symbols::Symbolizer& sym_;
  OriginRenderer renderer_;
  const size_t num_values_;
  pb::Profile profile_;
  absl::flat_hash_map<std::string, int64_t> strings_;
  absl::flat_hash_map<std::tuple<std::string, uint64_t, uint64_t, uint64_t, std::string>, uint64_t> mappings_;
  absl::flat_hash_map<uint64_t, bool> unnamed_mappings_;
  absl::flat_hash_map<std::string, uint64_t> functions_;
  absl::flat_hash_map<std::tuple<uint64_t, uint64_t, std::vector<uint64_t>>, uint64_t> locations_;
  absl::flat_hash_map<EventId, std::vector<uint64_t>> call_locations_;
  absl::flat_hash_map<std::string, int> samples_;
  // WriteGzipped's merged samples: each first's later equals, and those.
  absl::flat_hash_map<size_t, std::vector<size_t>> merged_;
  absl::flat_hash_set<size_t> merged_away_;
};

PprofBuilder::PprofBuilder(const session::Session& trace, std::vector<PprofValueType> types,
                           const std::string& default_type)
    : impl_(std::make_unique<Impl>(trace, std::move(types), default_type)) {}
PprofBuilder::~PprofBuilder() = default;

void PprofBuilder::AddCall(EventId call, const std::vector<int64_t>& values, const std::vector<PprofLabel>& labels) {
  impl_->AddCall(call, values, labels);
}
void PprofBuilder::AddPseudo(const std::vector<std::string>& frames, const std::vector<int64_t>& values,
                             const std::vector<PprofLabel>& labels) {
  impl_->AddPseudo(frames, values, labels);
}
void PprofBuilder::AddComment(const std::string& text) { impl_->AddComment(text); }
std::string PprofBuilder::Gzipped() const { return impl_->Gzipped(); }

bool PprofBuilder::WriteGzipped(size_t count, absl::FunctionRef<PprofSample(size_t)> sample, std::FILE* out) {
  FileCopyingStream file(out);
  google::protobuf::io::CopyingOutputStreamAdaptor raw(&file);
  return impl_->WriteGzipped(count, sample, &raw) && raw.Flush();
}

bool PprofBuilder::WriteGzipped(size_t count, absl::FunctionRef<PprofSample(size_t)> sample, std::string* out) {
  google::protobuf::io::StringOutputStream raw(out);
  return impl_->WriteGzipped(count, sample, &raw);
}

}  // namespace pageblame::render
