// Where a command's answer goes: standard output, or the file named by
// -o/--output. Writing an answer never destroys anything:
//   - a regular file (or a new name) is written to a temporary file beside
//     it, which Close() renames over the target only when the whole answer
//     is written: a failed command leaves the old file as it was, and only
//     the temporary file, which pageblame made, is removed;
//   - a symbolic link to a regular file: its target is replaced the same way
//     (the link stays a link);
//   - anything else (a character device, a FIFO, a dangling link) is written
//     directly and never removed;
//   - a path that is also one of the command's inputs (the same file, by
//     device and inode: `maps -i t.data -o t.data`) is a usage error (exit
//     2), found before anything is opened for writing.
// The temporary file is made before the trace is read, so an unwritable
// directory fails at once (exit 1, naming the file).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> out,
//                    OutputFile::Open(args.Value("--output"), args.ValuesExcept("--output")));
//   ... load, compute ...
//   RETURN_IF_ERROR(out->Write(answer));
//   RETURN_IF_ERROR(out->Close());      // flush or rename errors name the file too
#ifndef PAGEBLAME_CLI_OUTPUT_FILE_H_
#define PAGEBLAME_CLI_OUTPUT_FILE_H_

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pageblame::cli {

class OutputFile {
 public:
  // nullopt or "-": standard output. `inputs`: every file name the command
  // reads (names that are not files are ignored).
  static absl::StatusOr<std::unique_ptr<OutputFile>> Open(const std::optional<std::string>& path,
                                                          const std::vector<std::string>& inputs);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  bool is_stdout() const { return path_.empty(); }
  // For writers that stream (maps --json).
  std::FILE* stream() const { return file_; }
  absl::Status Write(std::string_view bytes);
  // A text answer (text, folded): written through EscapeText
  // (base/text_escape.h), the last line of defence behind the renderers,
  // which escape every name where it enters the text. Text answers are
  // UTF-8 lines and nothing else, so this changes no legitimate answer, yet
  // no control byte a renderer let through (a path or symbol in a place
  // not yet escaped) can act on the terminal of root reading it. JSON,
  // pprof and HTML go through Write: they have their own escapes, and
  // pprof is binary.
  absl::Status WriteText(std::string text);
  // The same for a text answer made a piece at a time (growth --detail:
  // hundreds of MB): the pieces' concatenation is written as WriteText
  // would write it whole. What follows a piece's last newline waits for the
  // next piece (escaping is by whole lines: a line's UTF-8 is judged whole),
  // at the latest for Close().
  absl::Status WriteTextPiece(std::string_view piece);
  // Flushes and closes the file (standard output is flushed on exit), then
  // puts it in place. After it the answer is in the target.
  absl::Status Close();
  // The error for a failed write: "cannot write FILE: reason".
  absl::Status WriteError() const;

 private:
  // `temp`: the temporary file renamed over `target` by Close(); empty when
  // the target is written directly.
  OutputFile(std::string path, std::string target, std::string temp, std::FILE* file)
      : path_(std::move(path)), target_(std::move(target)), temp_(std::move(temp)), file_(file) {}
  static absl::StatusOr<std::unique_ptr<OutputFile>> OpenDirect(const std::string& path);
  static absl::StatusOr<std::unique_ptr<OutputFile>> OpenReplacing(const std::string& path,
                                                                   const std::string& target);
  std::string path_;    // as the user named it; "" for standard output
  std::string target_;  // the file the answer ends up in
  std::string temp_;
  std::FILE* file_;
  std::string pending_;  // WriteTextPiece's unfinished line
  bool closed_ = false;
};

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_OUTPUT_FILE_H_
