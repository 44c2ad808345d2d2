// Where a command's answer goes: standard output, or the file named by
// -o/--output. The file is opened before the trace is read, so an unwritable
// path fails at once (exit 1, naming the file), and removed again if the
// command fails before its answer is written: no empty or half file is left
// behind by a failed run.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> out, OutputFile::Open(args.Value("--output")));
//   ... load, compute ...
//   RETURN_IF_ERROR(out->Write(answer));
//   RETURN_IF_ERROR(out->Close());      // flush errors (disk full) name the file too
#ifndef PAGEBLAME_CLI_OUTPUT_FILE_H_
#define PAGEBLAME_CLI_OUTPUT_FILE_H_

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pageblame::cli {

class OutputFile {
 public:
  // nullopt or "-": standard output.
  static absl::StatusOr<std::unique_ptr<OutputFile>> Open(const std::optional<std::string>& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  bool is_stdout() const { return path_.empty(); }
  // For writers that stream (maps --json).
  std::FILE* stream() const { return file_; }
  absl::Status Write(std::string_view bytes);
  // Flushes and closes the file (standard output is flushed on exit). After
  // it the file is kept.
  absl::Status Close();
  // The error for a failed write: "cannot write FILE: reason".
  absl::Status WriteError() const;

 private:
  OutputFile(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  std::string path_;  // "" for standard output
  std::FILE* file_;
  bool closed_ = false;
};

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_OUTPUT_FILE_H_
