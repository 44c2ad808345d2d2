// The compact, decoded form of everything replay consumes, small enough to
// buffer a whole perf "round" for time ordering without keeping samples.
//
//   TraceEvent e;                        // a kEnter, its Call payload zeroed
//   e.call().args[0] = addr;
//   TraceEvent m(TraceEvent::Kind::kMmap);
//   m.mmap().start = 0x7f0000000000;
//
// Every event has the header (time, kind, pid/tid, CPU, syscall, flag) and
// one payload, by kind: Call (a syscall's enter and/or exit), Comm, Task
// (fork and exit), Mmap, Lost. The payloads share their memory (a union):
// millions of events travel between the loader's and the replay thread and
// wait in the sorters, so the event is as big as its largest payload, the
// call's, not the sum of all. The accessors check the kind in debug builds.
#ifndef PAGEBLAME_REPLAY_TRACE_EVENT_H_
#define PAGEBLAME_REPLAY_TRACE_EVENT_H_

#include <cassert>
#include <cstdint>
#include <new>
#include <type_traits>

#include "processor/base/typed_id.h"
#include "processor/decode/syscall_event.h"
#include "processor/index/string_table.h"

namespace pageblame::replay {

struct TraceEvent {
  enum class Kind : uint8_t {
    kEnter,   // syscall enter: Call args, stack, raw_duplicate_time
    kExit,    // syscall exit: Call ret, raw_duplicate_time
    kComm,    // Comm; flag = exec
    kFork,    // pid/tid = child; Task parent
    kTaskExit,// pid/tid exited; Task
    kMmap,    // MMAP/MMAP2: Mmap
    kLost,    // Lost; flag = LOST_SAMPLES
    kRawDuplicate,    // a raw_syscalls duplicate recorded after its call's own enter (flag=false) or exit (flag=true); no payload
    // A syscall's enter and its exit in one event: the loader makes one when
    // an exit's event would come right after its enter's (same thread, CPU
    // and batch; nearly every call). time, args and stack are the enter's;
    // exit_time and ret the exit's. It is still replayed as two events at
    // their own times (LaneSorter), but travels, is held and is sorted as
    // one: ~45 % fewer events in memory while a big round waits. Only for
    // LaneSorter, and only without raw_duplicate times (see trace_loader.cc).
    kCall,
  };

  struct Call {  // kEnter, kExit, kCall (kRawDuplicate uses the header only)
    uint64_t args[6];  // kEnter, kCall
    int64_t ret;       // kExit, kCall
    union {
      // kEnter/kExit: the time of the call's raw_syscalls duplicate (the raw
      // enter just before an enter, the raw exit just before an exit), 0
      // if none.
      uint64_t raw_duplicate_time;
      uint64_t exit_time;  // kCall (which never has raw_duplicate times)
    };
    StackId stack;  // kEnter, kCall
  };
  struct Comm {
    StringId comm;
  };
  struct Task {  // kFork: the parent; kTaskExit: perf's ppid/ptid fields
    uint32_t ppid;
    uint32_t ptid;
  };
  struct Mmap {
    uint64_t start;
    uint64_t len;
    uint64_t pgoff;
    uint32_t prot;     // PROT_*; only if has_prot
    uint32_t flags;    // MAP_*; only if has_prot
    StringId filename;
    StringId build_id;  // raw bytes; invalid if the record had none
    bool has_prot;      // MMAP2 (MMAP v1 says neither prot nor flags)
  };
  struct Lost {
    uint64_t count;
  };

  TraceEvent() : payload_() {}
  explicit TraceEvent(Kind k) { Reset(k); }
  // Makes this event a `k`, with a zeroed payload of that kind (the header
  // stays as it is).
  void Reset(Kind k) {
    kind = k;
    switch (k) {
      case Kind::kComm: new (&payload_.comm) Comm(); break;
      case Kind::kFork: case Kind::kTaskExit: new (&payload_.task) Task(); break;
      case Kind::kMmap: new (&payload_.mmap) Mmap(); break;
      case Kind::kLost: new (&payload_.lost) Lost(); break;
      default: new (&payload_.call) Call(); break;
    }
  }

  bool IsCallKind() const {
    return kind == Kind::kEnter || kind == Kind::kExit || kind == Kind::kCall || kind == Kind::kRawDuplicate;
  }
  Call& call() { assert(IsCallKind()); return payload_.call; }
  const Call& call() const { assert(IsCallKind()); return payload_.call; }
  Comm& comm() { assert(kind == Kind::kComm); return payload_.comm; }
  const Comm& comm() const { assert(kind == Kind::kComm); return payload_.comm; }
  Task& task() { assert(kind == Kind::kFork || kind == Kind::kTaskExit); return payload_.task; }
  const Task& task() const { assert(kind == Kind::kFork || kind == Kind::kTaskExit); return payload_.task; }
  Mmap& mmap() { assert(kind == Kind::kMmap); return payload_.mmap; }
  const Mmap& mmap() const { assert(kind == Kind::kMmap); return payload_.mmap; }
  Lost& lost() { assert(kind == Kind::kLost); return payload_.lost; }
  const Lost& lost() const { assert(kind == Kind::kLost); return payload_.lost; }

  uint64_t time = 0;
  Kind kind = Kind::kEnter;
  decode::Syscall syscall = decode::Syscall::kMmap;
  bool flag = false;
  uint32_t pid = 0;
  uint32_t tid = 0;
  // The CPU whose ring buffer held the record (LaneSorter orders by it).
  static constexpr uint32_t kNoCpu = UINT32_MAX;
  uint32_t cpu = kNoCpu;

 private:
  union Payload {
    Payload() : call() {}
    Call call;
    Comm comm;
    Task task;
    Mmap mmap;
    Lost lost;
  } payload_;
};

// The time of an event's last part (a kCall's exit).
inline uint64_t LastTime(const TraceEvent& e) {
  return e.kind == TraceEvent::Kind::kCall ? e.call().exit_time : e.time;
}

// Millions of these travel between the threads: 24 bytes of header and the
// call's 72 (it was 112 with every field side by side).
static_assert(sizeof(TraceEvent) == 96, "TraceEvent grew");
static_assert(std::is_trivially_copyable_v<TraceEvent>, "events are copied as bytes");

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_TRACE_EVENT_H_
