// The summary FilterSession::Finish writes, as a string (tests).
//
//   EXPECT_THAT(SummaryTextForTest(*session), HasSubstr("created by mmap("));
#ifndef PAGEBLAME_PLUGIN_SUMMARY_TEXT_FOR_TEST_H_
#define PAGEBLAME_PLUGIN_SUMMARY_TEXT_FOR_TEST_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "plugin/filter_session.h"

namespace pageblame::plugin {

inline std::string SummaryTextForTest(const FilterSession& session) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  if (f == nullptr) return "";
  session.Finish(f);
  std::fclose(f);
  std::string text(data, size);
  std::free(data);
  return text;
}

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_SUMMARY_TEXT_FOR_TEST_H_
