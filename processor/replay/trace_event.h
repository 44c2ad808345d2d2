// The compact, decoded form of everything replay consumes, small enough to
// buffer a whole perf "round" for time ordering without keeping samples.
#ifndef PAGEBLAME_REPLAY_TRACE_EVENT_H_
#define PAGEBLAME_REPLAY_TRACE_EVENT_H_

#include <cstdint>

#include "processor/base/typed_id.h"
#include "processor/decode/syscall_event.h"
#include "processor/index/string_table.h"

namespace pageblame::replay {

struct TraceEvent {
  enum class Kind : uint8_t {
    kEnter,   // syscall enter: a[] = args, stack
    kExit,    // syscall exit: ret
    kComm,    // str = comm; flag = exec
    kFork,    // pid/tid = child; a[0] = ppid, a[1] = ptid
    kTaskExit,// pid/tid exited
    kMmap,    // MMAP/MMAP2: a[0] start, a[1] len, a[2] pgoff, a[3] prot, a[4] flags,
              // a[5] = 1 if prot/flags are known (MMAP2); str = filename; str2 = build id
    kLost,    // a[0] = count; flag = LOST_SAMPLES
    kTwin,    // a raw_syscalls twin recorded after its call's own enter (flag=false) or exit (flag=true)
    // A syscall's enter and its exit in one event: the loader makes one when
    // an exit's event would come right after its enter's (same thread, CPU
    // and batch; nearly every call). time, twin_time, a[] and stack are the
    // enter's; exit_time and ret the exit's. It is still replayed as two
    // events at their own times (LaneSorter), but travels, is held and is
    // sorted as one: ~45 % fewer events in memory while a big round waits.
    // Only for LaneSorter, and only without twin times (see trace_loader.cc).
    kCall,
  };
  uint64_t time = 0;
  // kEnter/kExit: the time of the call's raw_syscalls twin (the raw enter just
  // before an enter, the raw exit just before an exit), 0 if none.
  uint64_t twin_time = 0;
  Kind kind = Kind::kEnter;
  decode::Syscall syscall = decode::Syscall::kMmap;
  bool flag = false;
  uint32_t pid = 0;
  uint32_t tid = 0;
  // The CPU whose ring buffer held the record (LaneSorter orders by it).
  static constexpr uint32_t kNoCpu = UINT32_MAX;
  uint32_t cpu = kNoCpu;
  uint64_t a[6] = {0, 0, 0, 0, 0, 0};
  int64_t ret = 0;
  uint64_t exit_time = 0;  // kCall
  StackId stack;
  StringId str;
  StringId str2;
};
// The time of an event's last part (a kCall's exit).
inline uint64_t LastTime(const TraceEvent& e) {
  return e.kind == TraceEvent::Kind::kCall ? e.exit_time : e.time;
}

// Millions of these travel between the threads.
static_assert(sizeof(TraceEvent) == 112, "TraceEvent grew");

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_TRACE_EVENT_H_
