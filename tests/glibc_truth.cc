#include "tests/glibc_truth.h"

#include <regex>
#include <sstream>

#include "absl/strings/numbers.h"

namespace pageblame::testing {

std::vector<MallocInfoHeap> ParseMallocInfo(const std::string& xml) {
  std::vector<MallocInfoHeap> out;
  const std::regex heap(R"(<heap nr="\d+">([\s\S]*?)</heap>)");
  auto num = [](const std::string& body, const std::string& re) {
    std::smatch m;
    uint64_t v = 0;
    if (std::regex_search(body, m, std::regex(re))) absl::SimpleAtoi(m[1].str(), &v);
    return v;
  };
  for (std::sregex_iterator it(xml.begin(), xml.end(), heap), end; it != end; ++it) {
    const std::string body = (*it)[1].str();
    out.push_back({num(body, R"re(<total type="fast" count="\d+" size="(\d+)")re"),
                   num(body, R"re(<total type="rest" count="\d+" size="(\d+)")re"),
                   num(body, R"re(<system type="current" size="(\d+)")re")});
  }
  return out;
}

std::map<std::string, uint64_t> ParseNumbers(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  std::string k;
  uint64_t v;
  while (in >> k >> v) out[k] = v;
  return out;
}

}  // namespace pageblame::testing
