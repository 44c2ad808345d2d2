// The 8 bytes every perf record starts with (struct perf_event_header,
// include/uapi/linux/perf_event.h): u32 type, u16 misc, u16 size — the size
// of the whole record, header included. One reader for every place records
// are cut from (the file reader, the pipe reader, the decompressor), so
// each checks the same thing: a size below the header's own is corrupt.
//
//   if (avail < format::kEventHeaderSize) ... ;
//   const EventHeader h = ReadEventHeader(p);
//   if (!h.SizeIsSane()) return Error("size ", h.size, " < 8: corrupt record");
#ifndef PAGEBLAME_PERF_EVENT_HEADER_H_
#define PAGEBLAME_PERF_EVENT_HEADER_H_

#include <cstdint>

#include "processor/base/byte_reader.h"
#include "processor/perf/perf_format.h"

namespace pageblame::perf {

struct EventHeader {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;
  // A record is at least its header.
  bool SizeIsSane() const { return size >= format::kEventHeaderSize; }
};

// The header at `p`, which must hold format::kEventHeaderSize bytes (the
// callers check what is left before they call).
inline EventHeader ReadEventHeader(const uint8_t* p) {
  ByteReader r(p, format::kEventHeaderSize);
  EventHeader h;
  r.Read(&h.type);
  r.Read(&h.misc);
  r.Read(&h.size);
  return h;
}

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_EVENT_HEADER_H_
