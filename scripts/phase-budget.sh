# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# scripts/phase-budget.sh: the time budget of each phase of CI (.ci/run) and
# of the test command (scripts/test.sh), in seconds on the 2-core machine CI
# runs on. CI's hard limit is 90 min; the budgets add up to well under 45,
# so that a busy machine, or the scenarios still to come, do not push it
# over. A phase that overruns its budget is named at the end of both
# scripts' output; it fails nothing by itself (the hard limit does).
#
# Sourced by .ci/run and scripts/test.sh:
#   phase_budget NAME      the budget of phase NAME, in seconds (0: none)
#   budget_note NAME SECS  sets BUDGET_LINE to "NAME took SECS s (budget
#                          B s)", and remembers NAME in BUDGET_OVERRUNS when
#                          SECS > B (call it directly, not in $(...): a
#                          subshell's array is lost)
#   budget_close           one line naming every phase that overran, or
#                          saying none did
# Run as a script, it prints the table docs/arm64-platform.md ("CI's time
# budget") holds: `bash scripts/phase-budget.sh --table`;
# tests/check-budget-docs.sh checks the two agree.

# phase|budget in seconds|what the phase does
BUDGET_TABLE='ci: fresh root|240|.ci/run: mmdebstrap a minbase Debian 12 root and clone into it
dependencies|360|test.sh: install-deps.sh in the fresh root (compilers, QEMU, arm64 libraries)
build|300|test.sh: the native build, configured with --coverage
make check|1200|test.sh: host tests, the arm64 cross build and initramfs, every nested scenario (two at a time)
coverage|60|test.sh: gcovr over the counts make check left
distcheck|420|test.sh: the tarball built and tested at -O2 -Werror, installed, installcheck
fuzz|240|test.sh: the two libFuzzer targets built with clang, 60 s each
board rehearsal|1020|test.sh: the Debian 12 board (GICv3): root, carried build, main.sh --quick and the guest scenarios
ci: scripts/main.sh --quick|360|.ci/run: the main job on its smallest matrix, in the same root
ci: total|2700|.ci/run from start to end: 45 min, half of the hard limit'

phase_budget() {
    local line
    while IFS= read -r line; do
        [[ ${line%%|*} == "$1" ]] || continue
        line=${line#*|}
        echo "${line%%|*}"
        return
    done <<<"$BUDGET_TABLE"
    echo 0
}

BUDGET_OVERRUNS=() BUDGET_LINE=''
budget_note() {
    local b
    b=$(phase_budget "$1")
    if ((b > 0 && $2 > b)); then
        BUDGET_OVERRUNS+=("$1 ($2 s of $b s)")
        BUDGET_LINE="$1 took $2 s: OVER its budget of $b s"
    elif ((b > 0)); then
        BUDGET_LINE="$1 took $2 s (budget $b s)"
    else
        BUDGET_LINE="$1 took $2 s"
    fi
}

budget_close() {
    if ((${#BUDGET_OVERRUNS[@]})); then
        local IFS=';'
        echo "over budget: ${BUDGET_OVERRUNS[*]} (scripts/phase-budget.sh)"
    else
        echo "every phase within its budget (scripts/phase-budget.sh)"
    fi
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    [[ ${1:-} == --table ]] || { echo "usage: bash scripts/phase-budget.sh --table" >&2; exit 2; }
    echo '| phase | budget | what it does |'
    echo '| --- | --- | --- |'
    while IFS='|' read -r name secs what; do
        printf '| %s | %d min %02d s | %s |\n' "$name" $((secs / 60)) $((secs % 60)) "$what"
    done <<<"$BUDGET_TABLE"
fi
