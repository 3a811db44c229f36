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
