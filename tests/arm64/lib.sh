# shellcheck shell=sh
# tests/arm64/lib.sh: helpers for arm64 scenarios. In L1 it is
# /kvmmio/lib.sh; a scenario starts with `. /kvmmio/lib.sh`.
# Owns the functions below and turns on `set -eu`: any failing command
# fails the scenario. The scenario's exit status is the verdict.
#   step "text"        announce progress ("KVMMIO-STEP: text"; the runner
#                      names the last step on failure or timeout)
#   fail "msg"         print "KVMMIO-FAIL: msg" and exit 1
#   require_dev DEV... fail unless each DEV is a character device
#   $KVMMIO_RESULTS    directory whose files come back to the host
#   $KVMMIO_L1_GIC     GIC version of L1 (3 or 2)
set -eu
: "${KVMMIO_RESULTS:=/results}"
mkdir -p "$KVMMIO_RESULTS"

step() { echo "KVMMIO-STEP: $*"; }
fail() { echo "KVMMIO-FAIL: $*"; exit 1; }
require_dev() {
    for d in "$@"; do [ -c "$d" ] || fail "no device $d"; done
}

# Scenarios made of several runs (vmm-boot, net-modes) report each as a test
# case, in GoogleTest's XML shape so the platform's summary counts them:
#   record NAME SECONDS MESSAGE   one case (MESSAGE empty: passed)
#   write_cases SUITE             $KVMMIO_RESULTS/SUITE.xml; fails if any failed
cases='' failures=0 ncases=0
record() {
    ncases=$((ncases + 1))
    if [ -z "$3" ]; then
        echo "KVMMIO-STEP: $1 passed in $2 s"
        cases="$cases  <testcase name=\"$1\" classname=\"$scenario_name.gicv$KVMMIO_L1_GIC\" time=\"$2\"/>
"
    else
        echo "KVMMIO-FAIL: $1: $3"
        failures=$((failures + 1))
        cases="$cases  <testcase name=\"$1\" classname=\"$scenario_name.gicv$KVMMIO_L1_GIC\" time=\"$2\">
    <failure message=\"$3\"/>
  </testcase>
"
    fi
}
write_cases() {
    {
        echo '<?xml version="1.0" encoding="UTF-8"?>'
        echo "<testsuites tests=\"$ncases\" failures=\"$failures\">"
        echo "<testsuite name=\"$1.gicv$KVMMIO_L1_GIC\" tests=\"$ncases\" failures=\"$failures\">"
        printf '%s' "$cases"
        echo '</testsuite>'
        echo '</testsuites>'
    } >"$KVMMIO_RESULTS/$1.xml"
    [ "$failures" = 0 ] || fail "$failures of $ncases runs of $1 failed (console, stderr and stats of each in the results)"
}
