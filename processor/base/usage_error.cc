#include "processor/base/usage_error.h"

#include "absl/strings/cord.h"

namespace pageblame {
namespace {

constexpr char kUsagePayload[] = "pageblame/usage";

}  // namespace

absl::Status UsageError(absl::string_view message) {
  absl::Status s = absl::InvalidArgumentError(message);
  s.SetPayload(kUsagePayload, absl::Cord("1"));
  return s;
}

bool IsUsage(const absl::Status& s) { return s.GetPayload(kUsagePayload).has_value(); }

}  // namespace pageblame
