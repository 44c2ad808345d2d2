// BuildInfo: which pageblame this is, as `pageblame --version` prints it and
// as a folded recording's index names the build that made it (a folded
// recording outlives the build: another one reads it, and says so).
//
//   ThisBuild()   // "pageblame 0.4.0 (git 20308c8)"
#ifndef PAGEBLAME_BASE_BUILD_INFO_H_
#define PAGEBLAME_BASE_BUILD_INFO_H_

#include <string>

namespace pageblame {

// The release and the git revision the build was configured at.
std::string ThisBuild();

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_BUILD_INFO_H_
