// Whether a region version's bytes count as committed: any access at all
// (prot other than PROT_NONE). A PROT_NONE version is a reservation, never
// committed (docs: reservations are listed apart and never counted).
//
//   uint64_t committed = IsCommitted(v) ? v.end - v.start : 0;
#ifndef PAGEBLAME_INDEX_COMMITTED_H_
#define PAGEBLAME_INDEX_COMMITTED_H_

#include <sys/mman.h>

#include "processor/index/timeline_types.h"

namespace pageblame::index {

inline bool IsCommitted(const Version& v) { return (v.attrs.prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) != 0; }

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_COMMITTED_H_
