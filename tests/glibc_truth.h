// What a walked program says of its own heap, as glibc tells it: the
// oracle of the heap walker's live tests (heap_live_test,
// heap_record_live_test). traces/src/arena_mix.c writes malloc_info's XML
// and mallinfo2's fields ("arena 1234" lines) at its pause.
//
//   std::vector<MallocInfoHeap> heaps = ParseMallocInfo(ReadText(dir + "/info.xml"));
//   heaps[0].system;  // main_arena's <system type="current">
#ifndef PAGEBLAME_TESTS_GLIBC_TRUTH_H_
#define PAGEBLAME_TESTS_GLIBC_TRUTH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pageblame::testing {

// One <heap nr="N"> of malloc_info: its fastbin and other free totals
// (<total type="fast|rest" size=...>) and the system bytes it holds.
struct MallocInfoHeap {
  uint64_t fast = 0, rest = 0, system = 0;
};

// The <heap> elements in order (main_arena first); a missing field is 0.
std::vector<MallocInfoHeap> ParseMallocInfo(const std::string& xml);

// "name value" pairs, whitespace-separated (mallinfo2's fields).
std::map<std::string, uint64_t> ParseNumbers(const std::string& text);

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_GLIBC_TRUTH_H_
