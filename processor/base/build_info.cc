#include "processor/base/build_info.h"

#include "absl/strings/str_cat.h"
#include "processor/base/build_revision.h"

namespace pageblame {

// build_revision.h is this file's alone (processor/base/CMakeLists.txt): a
// new revision recompiles only it.
std::string ThisBuild() { return absl::StrCat("pageblame ", PAGEBLAME_VERSION, " (git ", PAGEBLAME_GIT_REVISION, ")"); }

}  // namespace pageblame
