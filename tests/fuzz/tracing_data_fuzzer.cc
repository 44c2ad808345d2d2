// libFuzzer target: the TRACING_DATA feature (the event formats stored in a
// trace), the text libtraceevent used to crash on (issue 21). A format that
// parses must have fields inside the 64 KiB a payload can hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "processor/decode/tracing_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using pageblame::decode::EventFormat;
  auto td = pageblame::decode::TracingData::Parse(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!td.ok()) return 0;
  for (int id = 0; id < 2048; ++id) {
    const EventFormat* ev = (*td)->FindEvent(id);
    if (ev == nullptr) continue;
    for (const auto& f : ev->fields()) {
      if (f.offset < 0 || f.size < 0 || f.offset + f.size > EventFormat::kMaxFieldEnd) std::abort();
    }
  }
  return 0;
}
