// PerfReader over a file-mode perf.data (PERFILE2 with the 104-byte
// perf_file_header): the header, attrs and features are read in place from a
// memory map; the data section is read front to back through a FileWindow and
// records are handed out as spans into it, so Next() neither copies a record
// nor allocates.
// Layout (tools/perf/util/header.c perf_session__read_header):
//   perf_file_header | attrs: {perf_event_attr (attr.size bytes),
//   perf_file_section ids}... | data section | feature section table (one
//   perf_file_section per set bit of adds_features, in bit order), placed
//   right after the data section.
// Internal to perf/; use PerfReader::Open().
#ifndef PAGEBLAME_PERF_PERF_FILE_READER_H_
#define PAGEBLAME_PERF_PERF_FILE_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include "absl/strings/string_view.h"

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/base/mapped_file.h"
#include "processor/base/file_window.h"
#include "processor/perf/perf_reader.h"

namespace pageblame::perf {

class PerfFileReader : public PerfReader {
 public:
  // Parses the header, attrs and feature sections of `file`. Errors are one
  // line naming the file and the offending offset.
  static absl::StatusOr<std::unique_ptr<PerfReader>> Open(std::unique_ptr<MappedFile> file);

  absl::StatusOr<bool> Next(RawRecord* out) override;
  // Bytes of the data section consumed so far (compare with info().data_size).
  uint64_t bytes_read() const override { return pos_ - data_begin_; }
  // From the file, with one pread, for records outside COMPRESSED data.
  bool CanReadAgain(const RawRecord& rec) const override {
    return rec.decompressed_offset == RawRecord::kNotCompressed;
  }
  absl::StatusOr<bool> ReadAgain(const RawRecord& seen, std::vector<uint8_t>* buffer,
                                 RawRecord* out) const override;

 private:
  struct Section {
    uint64_t offset = 0;
    uint64_t size = 0;
  };

  explicit PerfFileReader(std::unique_ptr<MappedFile> file);

  absl::Status ReadHeader();
  absl::Status ReadAttrs(const Section& attrs, uint64_t attr_size);
  absl::Status ReadFeatures(const uint64_t (&bitmap)[4], uint64_t table_offset);
  // Fails unless [offset, offset+size) lies within the file.
  absl::Status CheckSection(absl::string_view name, const Section& s) const;
  absl::Status HeaderError(absl::string_view what) const;
  // Next()'s rare paths, kept out of it: the error for a header at pos_
  // that is cut short (`left` bytes) or has a bad size, and passing over one
  // of perf's own records (and the payload some carry).
  ABSL_ATTRIBUTE_NOINLINE absl::Status BadHeader(size_t left, uint32_t type,
                                                 uint16_t size) const;
  ABSL_ATTRIBUTE_NOINLINE absl::Status SkipUserRecord(uint32_t type, const uint8_t* base,
                                                      uint16_t size, size_t offset);
  absl::Span<const uint8_t> Bytes(const Section& s) const;

  std::unique_ptr<MappedFile> file_;
  size_t data_begin_ = 0;  // [data_begin_, data_end_): the data section
  size_t data_end_ = 0;
  size_t pos_ = 0;  // next record's file offset
  std::unique_ptr<FileWindow> window_;  // over the data section; after file_
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_PERF_FILE_READER_H_
