#include "processor/regions/nt_file_note.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/status_macros.h"

namespace pageblame::regions {
namespace {

// Words of the core's class and byte order, read at checked positions.
class WordReader {
 public:
  WordReader(absl::string_view bytes, int word_size, bool big_endian)
      : bytes_(bytes), size_(static_cast<size_t>(word_size)), big_endian_(big_endian) {}

  size_t word_size() const { return size_; }
  // Words that fit in the bytes.
  uint64_t capacity() const { return bytes_.size() / size_; }
  // Word `i`; requires i < capacity().
  uint64_t Word(uint64_t i) const {
    uint64_t v = 0;
    for (size_t k = 0; k < size_; ++k) {
      size_t byte = big_endian_ ? k : size_ - 1 - k;
      v = v << 8 | static_cast<unsigned char>(bytes_[i * size_ + byte]);
    }
    return v;
  }

 private:
  absl::string_view bytes_;
  size_t size_;
  bool big_endian_;
};

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("NT_FILE note: ", what));
}

// The `count` names after the entries; padding after the last one is fine.
absl::Status ReadNames(absl::string_view names, std::vector<FileMapping>* out) {
  size_t pos = 0;
  for (FileMapping& m : *out) {
    const void* nul = pos < names.size() ? std::memchr(names.data() + pos, 0, names.size() - pos)
                                         : nullptr;
    if (nul == nullptr)
      return Bad(absl::StrFormat("%d entries but only %d file names (NUL-terminated) in the "
                                 "%d bytes after them",
                                 out->size(), m.entry - 1, names.size()));
    size_t len = static_cast<const char*>(nul) - (names.data() + pos);
    m.path = std::string(names.substr(pos, len));
    pos += len + 1;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<FileMapping>> NtFileNote::Parse(absl::string_view desc, int word_size,
                                                           bool big_endian) {
  if (word_size != 4 && word_size != 8)
    return absl::InternalError(absl::StrFormat("NT_FILE word size %d", word_size));
  WordReader w(desc, word_size, big_endian);
  if (w.capacity() < 2)
    return Bad(absl::StrFormat("%d bytes, too short for its count and page size", desc.size()));
  const uint64_t count = w.Word(0), page_size = w.Word(1);
  // Division, not multiplication: a huge count must not wrap the check.
  if (count > (w.capacity() - 2) / 3)
    return Bad(absl::StrFormat("count %d needs that many entries of 3 %d-byte words, but the "
                               "note has room for %d",
                               count, word_size, (w.capacity() - 2) / 3));
  std::vector<FileMapping> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    FileMapping& m = out[i];
    m.entry = static_cast<int>(i + 1);
    m.start = w.Word(2 + 3 * i);
    m.end = w.Word(3 + 3 * i);
    const uint64_t ofs = w.Word(4 + 3 * i);
    if (m.end <= m.start)
      return Bad(absl::StrFormat("entry %d: end 0x%x is not above start 0x%x", i + 1, m.end,
                                 m.start));
    if (page_size != 0 && ofs > ~uint64_t{0} / page_size)
      return Bad(absl::StrFormat("entry %d: file offset %d x page size %d runs past 2^64", i + 1,
                                 ofs, page_size));
    m.offset = ofs * page_size;
  }
  RETURN_IF_ERROR(ReadNames(desc.substr((2 + 3 * count) * w.word_size()), &out));
  return out;
}

}  // namespace pageblame::regions
