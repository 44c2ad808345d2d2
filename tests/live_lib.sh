# live_lib.sh — sourced by the live test scripts (tests/*.sh run by ctest
# with the label `live`): how they speak and end, and the check they all
# start with. ctest reads exit 77 as skipped (SKIP_RETURN_CODE).
#
#   . "$(dirname "$0")/live_lib.sh"
#   need_root_and_perf
#   [[ -n $x ]] || skip "why"; ...; fail "what went wrong"
log() { echo "$(basename "$0"): $*" >&2; }
skip() { log "SKIP: $*"; exit 77; }
fail() { log "FAIL: $*"; exit 1; }
need_root_and_perf() {
  [[ $EUID -eq 0 ]] || skip "run as root (perf needs the syscall tracepoints)"
  command -v perf >/dev/null || skip "perf is not installed"
}
