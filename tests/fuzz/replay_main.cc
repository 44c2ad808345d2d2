// Runs a libFuzzer target's LLVMFuzzerTestOneInput over files and
// directories of inputs, without libFuzzer: how the normal (gcc) build and
// ctest keep every seed and every input a fuzzer once crashed on
// (tests/fuzz/regressions/TARGET/) as a regression test.
//
//   build/tests/fuzz/perf_file_fuzzer_replay traces/alloc-fp.data tests/fuzz/regressions/perf_file
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void RunOne(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::directory_iterator(arg)) {
        if (e.is_regular_file() && e.path().filename() != "README.md") RunOne(e.path()), ++inputs;
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      RunOne(arg), ++inputs;
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      return 1;
    }
  }
  std::printf("%d inputs ran\n", inputs);
  return inputs > 0 ? 0 : 1;
}
