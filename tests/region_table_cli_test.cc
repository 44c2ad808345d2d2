// Region tables as `pageblame diff` and `pageblame attribute` read them:
// encodings (UTF-16 saved by PowerShell), ELF core files, overlapping rows,
// and one-line errors with exit code 1 for any table that cannot be read.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using ::testing::HasSubstr;

std::string Sample(const std::string& name) { return SourceDir() + "/processor/regions/testdata/" + name; }
std::string Core(const std::string& name) { return SourceDir() + "/traces/cores/" + name; }

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  std::string path = ScratchPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The main process of rules-record.data, as "-i TRACE --pid PID".
std::string TraceArgs() {
  for (const ManifestRow& r : ReadManifest()) {
    if (r["trace"] == "rules-record.data" && r["role"] == "main")
      return " -i " + TracePath(r["trace"]) + " --pid " + r["pid"];
  }
  ADD_FAILURE() << "no rules-record.data main row";
  return "";
}

// `iconv -f UTF-8 -t ENCODING` of a file, as Windows tools save text.
std::string Converted(const std::string& path, const std::string& encoding, const std::string& name) {
  std::string out = ScratchPath(name);
  std::string cmd = "iconv -f UTF-8 -t " + encoding + " '" + path + "' > '" + out + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return out;
}

TEST(RegionTableCliTest, WindbgOutputSavedAsUtf16DiffsLikeTheOriginal) {
  const std::string sos = " " + Sample("sos-maddress.output");
  CliRun plain = Pageblame("diff --json " + Sample("windbg-address.output") + sos);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // iconv's "UTF-16" writes a byte-order mark, little-endian here, as
  // PowerShell's redirection does; UTF-16BE gets its mark by hand.
  std::string le = Converted(Sample("windbg-address.output"), "UTF-16", "address-utf16.txt");
  ASSERT_EQ(ReadText(le).substr(0, 2), "\xFF\xFE");
  std::string be_body = ReadText(Converted(Sample("windbg-address.output"), "UTF-16BE", "be-body.txt"));
  std::string be = WriteTemp("address-utf16be.txt", "\xFE\xFF" + be_body);
  for (const std::string& path : {le, be}) {
    CliRun r = Pageblame("diff --json " + path + sos);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out);
  }
  // And as the runtime table, and for attribute.
  std::string sos16 = Converted(Sample("sos-maddress.output"), "UTF-16", "sos-utf16.txt");
  CliRun r = Pageblame("diff --json " + le + " " + sos16);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  CliRun a = Pageblame("attribute --json" + TraceArgs() + " --address " + le + " --maddress " + sos16);
  ASSERT_EQ(a.exit_code, 0) << a.err;
}

TEST(RegionTableCliTest, EveryTableErrorIsOneLineAndExitsOne) {
  std::string dir = ScratchPath("a-directory");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::string core = ReadText(Core("gcore-coremaps.core"));
  struct Case {
    std::string path, message;
  } cases[] = {
      {dir, dir + ": is a directory, not a region table"},
      {WriteTemp("reversed.txt", "0x3000-0x1000\n"), "reversed.txt:1: END must be above START"},
      {WriteTemp("empty.txt", ""), "empty.txt: empty file"},
      {WriteTemp("odd16.txt", std::string("\xFF\xFE" "0\0x", 5)), "odd16.txt: odd number of bytes"},
      {WriteTemp("lone16.txt", std::string("\xFF\xFE" "0\0\n\0\x00\xD8", 8)),
       "lone16.txt:2: invalid UTF-16LE: unpaired surrogate"},
      {WriteTemp("no-bom16.txt", std::string("0\0x\0" "1\0" "0\0" "0\0" "0\0", 12)),
       "no-bom16.txt: binary file, not a region table; it looks like UTF-16"},
      {WriteTemp("cut.core", core.substr(0, 1000)), "cut.core: truncated core: the file (1000 bytes)"},
      {WriteTemp("notes-cut.core", core.substr(0, core.size() - 1)), "notes-cut.core: truncated core"},
      {TracePath("bin/rules"), "rules: an ELF file of type ET_DYN"},
      {"/nonexistent/table.txt", "cannot open /nonexistent/table.txt"},
  };
  const std::string other = " " + Sample("sos-maddress.output");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    for (const std::string& args :
         {"diff " + c.path + other, "diff" + other + " " + c.path,
          "attribute" + TraceArgs() + " --regions " + c.path,
          "attribute" + TraceArgs() + " --address " + c.path + " --maddress" + other,
          "attribute" + TraceArgs() + " --address" + other + " --maddress " + c.path}) {
      SCOPED_TRACE(args);
      CliRun r = Pageblame(args);
      ExpectOneLineError(r, c.message);
      EXPECT_EQ(r.exit_code, 1);
    }
  }
}

TEST(RegionTableCliTest, UsageMistakesStillExitTwo) {
  std::string list = WriteTemp("ok.txt", "0x1000-0x2000\n");
  EXPECT_EQ(Pageblame("diff " + list).exit_code, 2);
  EXPECT_EQ(Pageblame("diff " + list + " " + list + " --bogus").exit_code, 2);
  EXPECT_EQ(Pageblame("attribute" + TraceArgs() + " --regions").exit_code, 2);
  EXPECT_EQ(Pageblame("attribute" + TraceArgs() + " --regions " + list + " --address " + list).exit_code, 2);
}

// sum(stacks.bytes) + before_trace_bytes + unmapped_bytes == bytes, per region.
void ExpectRegionsAddUp(const nlohmann::json& j) {
  for (const auto& reg : j["regions"]) {
    uint64_t sum = reg["before_trace_bytes"].get<uint64_t>() + reg["unmapped_bytes"].get<uint64_t>();
    for (const auto& s : reg["stacks"]) sum += s["bytes"].get<uint64_t>();
    EXPECT_EQ(sum, reg["bytes"].get<uint64_t>()) << reg.dump();
  }
}

TEST(RegionTableCliTest, AttributeCountsARepeatedRowOnce) {
  std::string table = WriteTemp("repeated.txt", "0x10000-0x31000\n0x10000-0x31000\n0x10000-0x31000\n");
  CliRun r = Pageblame("attribute --json" + TraceArgs() + " --regions " + table);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["regions"].size(), 1u);
  EXPECT_EQ(j["regions"][0]["start"], "0x10000");
  EXPECT_EQ(j["regions"][0]["end"], "0x31000");
  EXPECT_EQ(j["regions"][0]["bytes"].get<uint64_t>(), 135168u);  // not 405,504
  ExpectRegionsAddUp(j);
  EXPECT_EQ(r.err, "pageblame: " + table + ": 3 rows share bytes with other rows (lines 1, 2, 3): "
                   "135,168 bytes are listed more than once; each is attributed once (1 merged region)\n");
  // The text names the merged lines.
  CliRun t = Pageblame("attribute --detail" + TraceArgs() + " --regions " + table);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr(": 1 regions, 135168 bytes (132.0 KiB)"));
  EXPECT_THAT(t.out, HasSubstr("0x10000-0x31000  132.0 KiB  (lines 1, 2, 3)"));
}

TEST(RegionTableCliTest, AttributeTotalOfTheWholeAddressSpaceDoesNotWrap) {
  std::string table = WriteTemp("everything.txt", "0x0-0xffffffffffffffff\n0x10000-0x31000\n");
  CliRun r = Pageblame("attribute --json" + TraceArgs() + " --regions " + table);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["regions"].size(), 1u);
  EXPECT_EQ(j["regions"][0]["bytes"].get<uint64_t>(), 0xffffffffffffffffu);
  ExpectRegionsAddUp(j);
  // The whole process is in it: every stack of the trace made some of it.
  EXPECT_GT(j["stacks"].size(), 10u);
  EXPECT_THAT(r.err, HasSubstr("135,168 bytes are listed more than once"));
  CliRun t = Pageblame("attribute" + TraceArgs() + " --regions " + table);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr(": 1 regions, 18446744073709551615 bytes (16.0 EiB)"));
  CliRun f = Pageblame("attribute --format folded" + TraceArgs() + " --regions " + table);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  unsigned __int128 folded = 0;
  for (size_t at = 0, nl; (nl = f.out.find('\n', at)) != std::string::npos; at = nl + 1) {
    size_t sp = f.out.rfind(' ', nl);
    folded += std::stoull(f.out.substr(sp + 1, nl - sp - 1));
  }
  EXPECT_TRUE(folded == 0xffffffffffffffffu);
}

TEST(RegionTableCliTest, CoreFileDiffsAgainstTheMapsOfTheSameMoment) {
  // gcore leaves [vvar] and [vvar_vclock] out; everything else matches.
  const std::string core = Core("gcore-coremaps.core"), maps = Core("gcore-coremaps.maps");
  CliRun r = Pageblame("diff --json " + core + " " + maps);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["unaccounted"]["bytes"], 0);
  uint64_t vvar = 0;
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(ReadText(maps), '\n'))) {
    if (line.find("[vvar") == std::string::npos) continue;
    uint64_t s = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    uint64_t e = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    vvar += e - s;
  }
  EXPECT_GT(vvar, 0u);
  EXPECT_EQ(j["runtime_only"]["bytes"].get<uint64_t>(), vvar);
  for (const auto& p : j["runtime_only"]["pieces"]) EXPECT_THAT(p["usage"].get<std::string>(), HasSubstr("[vvar"));
  // The other way round: the core claims every row of the maps file but those.
  CliRun back = Pageblame("diff --json " + maps + " " + core);
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(nlohmann::json::parse(back.out)["unaccounted"]["bytes"].get<uint64_t>(), vvar);
}

TEST(RegionTableCliTest, AttributeTakesACoreFile) {
  const std::string core = Core("gcore-coremaps.core");
  CliRun r = Pageblame("attribute --json" + TraceArgs() + " --regions " + core);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["regions"].size(), 20u);
  ExpectRegionsAddUp(j);
  EXPECT_TRUE(r.err.empty()) << r.err;
  // --address CORE --maddress MAPS: nothing unaccounted, nothing to attribute.
  CliRun d = Pageblame("attribute --json" + TraceArgs() + " --address " + core + " --maddress " +
                       Core("gcore-coremaps.maps"));
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(nlohmann::json::parse(d.out)["regions"].size(), 0u);
}

}  // namespace
}  // namespace pageblame::testing
