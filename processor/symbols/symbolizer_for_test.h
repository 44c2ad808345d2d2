// For the symbols tests: a Symbolizer with its own mapping history, for the
// tests to fill as the loader fills the trace's (replay/load_pass.cc).
//
//   SymbolizerWithMaps sym(options);
//   sym.maps().AddMapping(pid, 0, start, len, pgoff, path, "");
//   sym.Symbolize(pid, 10, ip);
#ifndef PAGEBLAME_SYMBOLS_SYMBOLIZER_FOR_TEST_H_
#define PAGEBLAME_SYMBOLS_SYMBOLIZER_FOR_TEST_H_

#include <memory>
#include <utility>

#include "processor/symbols/mapping_history.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::symbols {

class SymbolizerWithMaps : public Symbolizer {
 public:
  explicit SymbolizerWithMaps(SymbolizerOptions options,
                              std::shared_ptr<MappingHistory> maps = std::make_shared<MappingHistory>())
      : Symbolizer(std::move(options), maps), maps_(std::move(maps)) {}
  MappingHistory& maps() { return *maps_; }

 private:
  std::shared_ptr<MappingHistory> maps_;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_SYMBOLIZER_FOR_TEST_H_
