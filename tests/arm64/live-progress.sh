# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/arm64/live-progress.sh: sourced by the make-check wrappers of the
# Linux-guest scenarios (platform-test.sh nested, host-scenario.sh on an
# arm64 host). make check keeps a test's output in its .log until the test
# ends, so a scenario would be silent for minutes; Makefile.am's
# AM_TESTS_FD_REDIRECT gives each test fd 9 = make's stderr.
#   show_live LABEL   copies stdin to stdout; where fd 9 is open, each
#                     scenario step (KVMMIO-STEP, KVMMIO-FAIL) also goes
#                     there as it happens, with LABEL and the seconds since
#                     this file was sourced
live_started=$SECONDS live_fd=0
{ true >&9; } 2>/dev/null && live_fd=1
show_live() {
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$line"
    ((live_fd)) || continue
    line=${line%$'\r'}
    case $line in
    *KVMMIO-STEP:* | *KVMMIO-FAIL:*)
      printf '  %s %4d s: %s\n' "$1" $((SECONDS - live_started)) "${line#*KVMMIO-}" >&9 ;;
    esac
  done
}
