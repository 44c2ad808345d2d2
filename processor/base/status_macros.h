// Status helpers. Debian 12's Abseil (20220623) ships absl::Status but not the
// RETURN_IF_ERROR / ASSIGN_OR_RETURN macros, so we carry our own.
#ifndef PAGEBLAME_BASE_STATUS_MACROS_H_
#define PAGEBLAME_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PB_CONCAT_INNER_(a, b) a##b
#define PB_CONCAT_(a, b) PB_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status pb_status_ = (expr);              \
    if (!pb_status_.ok()) return pb_status_;         \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MaybeX());` — unwraps a StatusOr or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  PB_ASSIGN_OR_RETURN_IMPL_(PB_CONCAT_(pb_statusor_, __LINE__), lhs, expr)
#define PB_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#endif  // PAGEBLAME_BASE_STATUS_MACROS_H_
