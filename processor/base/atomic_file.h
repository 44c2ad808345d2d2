// AtomicFile: a file pageblame writes for itself beside an input (the
// recording's index), whole or not at all: the bytes go to a new temporary
// file in the same directory (O_EXCL, `mode`), which Commit() renames over
// `path`. A reader sees the old file or the new one, never half of one; a
// link at `path` is replaced, never followed; a failure (or an AtomicFile
// dropped without Commit) leaves `path` as it was and removes the temporary
// file. Written in pieces as a PatchableSink (byte_sink.h), so a large file
// is never whole in memory; WriteFileAtomically writes bytes there whole.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> f, AtomicFile::Create("app.data.index", 0600));
//   f->Append(header); f->Append(body); f->Overwrite(8, length);
//   RETURN_IF_ERROR(f->Commit());
//   RETURN_IF_ERROR(WriteFileAtomically("app.data.index", bytes, 0600));
#ifndef PAGEBLAME_BASE_ATOMIC_FILE_H_
#define PAGEBLAME_BASE_ATOMIC_FILE_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/base/byte_sink.h"

namespace pageblame {

class AtomicFile : public PatchableSink {
 public:
  // Errors name the file and the reason (an unwritable directory: PermissionDenied).
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path, mode_t mode);
  ~AtomicFile() override;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void Overwrite(uint64_t at, std::string_view bytes) override;
  // The first write that failed (naming the file).
  absl::Status status() const override { return status_; }
  // Closes the file and renames it over the path if every write went; else
  // removes it and says why.
  absl::Status Commit();

 protected:
  void Take(std::string_view bytes) override;

 private:
  AtomicFile(std::string path, std::string temp, int fd) : path_(std::move(path)), temp_(std::move(temp)), fd_(fd) {}
  void Failed(int err);

  std::string path_;
  std::string temp_;
  int fd_;
  absl::Status status_;
};

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode);

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_ATOMIC_FILE_H_
