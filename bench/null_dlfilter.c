// null_dlfilter.c — a perf dlfilter that keeps nothing: perf's own parse
// floor for the benchmark (bench/run.sh), the reference of its target
// "≥ 2x faster than perf script --dlfilter with a filter that keeps nothing".
//
//   perf script -i trace.data --dlfilter bench/out/null-dlfilter.so
//
// filter_event_early runs before perf resolves the sample's thread and map
// (tools/perf/builtin-script.c, process_sample_event), so what remains is
// reading, ordering and parsing the records. Returning 1 drops the sample.
#include <perf/perf_dlfilter.h>

int filter_event_early(void* data, const struct perf_dlfilter_sample* sample, void* ctx) {
  (void)data;
  (void)sample;
  (void)ctx;
  return 1;
}
