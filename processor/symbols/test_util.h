// Helpers for the symbols/ tests: temp directories, this process's own
// mappings (/proc/self/maps), and small ELF files written with libelf so that
// tests control every symbol without needing a compiler at test time.
#ifndef PAGEBLAME_SYMBOLS_TEST_UTIL_H_
#define PAGEBLAME_SYMBOLS_TEST_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame::symbols::testing {

// A function with a C++ (mangled) name whose address tests symbolize.
int MarkerFunction(int x);

// A fresh directory (processor/base/temp_dir_for_test.h), named pb_symbols_*.
class TempDir : public pageblame::TempDir {
 public:
  TempDir() : pageblame::TempDir("pb_symbols") {}
};

// Creates the parent directories of `path`, then the file with `contents`.
void WriteFile(const std::string& path, const std::string& contents);
// Creates the parent directories of `link`, then a symlink to `target`.
void MakeSymlink(const std::string& target, const std::string& link);

// One line of /proc/self/maps.
struct SelfMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t pgoff = 0;
  std::string perms;
  std::string path;
};
std::vector<SelfMapping> ReadSelfMaps();
std::optional<SelfMapping> SelfMappingFor(uint64_t addr);

// A synthetic ELF64 (x86-64, ET_DYN) with one executable PT_LOAD mapping
// .text at file offset kTextOffset and virtual address `text_vaddr`, an
// optional GNU build id note and a .symtab with the given symbols.
struct TestSymbol {
  std::string name;
  uint64_t value = 0;
  uint64_t size = 0;
  unsigned char type = 2;  // STT_FUNC
  unsigned char bind = 1;  // STB_GLOBAL
  uint16_t section = kTextSection;  // or kDataSection, SHN_UNDEF, SHN_ABS

  static constexpr uint16_t kTextSection = 1;
  static constexpr uint16_t kDataSection = 2;
};
struct TestElf {
  static constexpr uint64_t kTextOffset = 0x2000;
  uint64_t text_vaddr = 0x5000;
  uint64_t text_size = 0x1000;
  std::string build_id;      // raw; "" writes no note
  bool debug_only = false;   // .text as SHT_NOBITS, p_offset/p_filesz 0 (objcopy --only-keep-debug)
  bool dynsym = false;       // write the symbols as .dynsym instead of .symtab
  std::vector<TestSymbol> symbols;
};
absl::Status WriteTestElf(const std::string& path, const TestElf& spec);

// jitdump bytes as a JIT writes them (native order, perf's layout; see
// jit_dump.h): a header for `pid`, then the records asked for.
class JitDumpWriter {
 public:
  explicit JitDumpWriter(uint32_t pid, uint32_t magic = 0x4A695444, uint32_t header_size = 40) {
    Put(magic);
    Put(uint32_t{1});  // version
    Put(header_size);
    Put(uint32_t{62});  // EM_X86_64
    Put(uint32_t{0});
    Put(pid);
    Put(uint64_t{123});  // timestamp
    Put(uint64_t{0});    // flags
    bytes_.resize(header_size, '\0');
  }
  JitDumpWriter& Load(uint64_t addr, uint64_t size, uint64_t index, const std::string& name, size_t code_bytes = 4) {
    std::string body;
    Append(&body, uint32_t{7});  // pid
    Append(&body, uint32_t{8});  // tid
    Append(&body, addr);         // vma
    Append(&body, addr);
    Append(&body, size);
    Append(&body, index);
    body += name;
    body.push_back('\0');
    body.append(code_bytes, '\x90');
    return Record(0, body);
  }
  JitDumpWriter& Move(uint64_t from, uint64_t to, uint64_t size, uint64_t index) {
    std::string body;
    Append(&body, uint32_t{7});
    Append(&body, uint32_t{8});
    Append(&body, to);
    Append(&body, from);
    Append(&body, to);
    Append(&body, size);
    Append(&body, index);
    return Record(1, body);
  }
  JitDumpWriter& Record(uint32_t id, const std::string& body) {
    Put(id);
    Put(static_cast<uint32_t>(16 + body.size()));
    Put(uint64_t{456});
    bytes_ += body;
    return *this;
  }
  std::string bytes() const { return bytes_; }

 private:
  template <typename T>
  static void Append(std::string* s, T v) {
    s->append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  void Put(T v) {
    Append(&bytes_, v);
  }
  std::string bytes_;
};

}  // namespace pageblame::symbols::testing

#endif  // PAGEBLAME_SYMBOLS_TEST_UTIL_H_
