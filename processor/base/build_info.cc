#include "processor/base/build_info.h"

#include "absl/strings/str_cat.h"

namespace pageblame {

// PAGEBLAME_VERSION and PAGEBLAME_GIT_REVISION are this file's alone
// (processor/base/CMakeLists.txt): a new revision recompiles only it.
std::string ThisBuild() { return absl::StrCat("pageblame ", PAGEBLAME_VERSION, " (git ", PAGEBLAME_GIT_REVISION, ")"); }

}  // namespace pageblame
