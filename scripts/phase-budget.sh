# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# scripts/phase-budget.sh: the time budget of each phase of CI (.ci/run) and
# of the test command (scripts/test.sh), in seconds on the 2-core machine CI
# runs on. CI's hard limit is 90 min; its budget is 45, half of it, so that
# a busy machine or the scenarios still to come fit; each phase's budget is
# its target, and together they fill the 45 (the board rehearsal's budget
# is its wait and boot: its root, carried build and image are made beside
# coverage, the packages, fuzzing and the main job; the guest disk's is the
# wait after the board: its guest is made in the board's root, in that
# preparation, and booted beside the board's boot). A phase
# that overruns its budget is named at the end of both scripts' output; it
# fails nothing by itself (the hard limit does).
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
BUDGET_TABLE='ci: fresh root|70|.ci/run: mmdebstrap a minbase Debian 12 root and clone into it
dependencies|120|test.sh: install-deps.sh in the fresh root (compilers, QEMU, arm64 libraries)
build|120|test.sh: the native build, configured with --coverage (-O0, no -g)
make check|880|test.sh: host tests, the arm64 cross build and initramfs, every nested scenario but net-compare, whose matrix the main job holds (two at a time)
coverage|30|test.sh: gcovr over the counts make check left
debs|270|test.sh: the Debian packages built from the files of the release tarball (every file git tracks is in it) at -O2 -Werror, lintian without errors, installcheck against their files
fuzz|170|test.sh: the five libFuzzer targets (transport, devices, block, control requests, vhost-user messages) built with clang and run side by side, 45 s each
main job|400|test.sh: scripts/main.sh --quick with the host, the mirror, user-trap and the peer VMM (qemu-pci) at both MTUs, the mirror guest to guest, disk, shared folder and vsock, the counters of each mode checked (the README main-job command, with the net-compare matrix of make check inside it), on this build
board rehearsal|610|test.sh: the Debian 13 board (GICv2): waits for its root, carried build, arm64 packages, made guest and image (made in the background from the start of the build, at the lowest priority until make check ends), then boots it twice at once: on each the packages installed with apt; on one main.sh --quick, on the other the guest scenarios, the README quick start and the systemd unit, on the installed kvmmio
guest disk|30|test.sh: the wait, once the board is done, for the guest of "Your first guest" booted from its disk on GICv2 (made by make-guest.sh in the root of the board during its preparation, booted beside the boot of the board)
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

# How busy the machine's CPUs were over a phase (all processes, this run's
# and any other's): busy and total jiffies of /proc/stat's "cpu" line, at
# the last budget_note and when this file was sourced. A phase far below
# 100% leaves room for work beside it; one at 100% is cut only by less work.
budget_cpu_ticks() {
    awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6, t; exit }' \
        /proc/stat 2>/dev/null || echo "0 0"
}
read -r BUDGET_BUSY0 BUDGET_TOTAL0 <<<"$(budget_cpu_ticks)"
BUDGET_BUSY=$BUDGET_BUSY0 BUDGET_TOTAL=$BUDGET_TOTAL0
# budget_cpu_use SINCE_BUSY SINCE_TOTAL: ", CPUs N% busy" since then.
budget_cpu_use() {
    local busy total
    read -r busy total <<<"$(budget_cpu_ticks)"
    ((total > $2)) || return 0
    echo ", CPUs $(((busy - $1) * 100 / (total - $2)))% busy"
}

# children_cpu PID: the CPU time, in whole seconds of user and system, of
# the processes shell PID has reaped (its children, with what they reaped
# in turn; /proc/PID/stat's cutime and cstime): what a phase's programs,
# QEMU's vCPU threads above all, cost the machine, where wall time also
# holds the waits on the work beside them. PID is the calling shell's
# ($$, or $BASHPID in a background subshell, read outside any $(...):
# a command substitution is a shell of its own).
children_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d\n", ($14 + $15) / hz }' "/proc/$1/stat"
}

BUDGET_OVERRUNS=() BUDGET_LINE=''
budget_note() {
    local b cpu
    b=$(phase_budget "$1")
    # A total is measured from the start, a phase from the previous one.
    if [[ $1 == *total ]]; then
        cpu=$(budget_cpu_use "$BUDGET_BUSY0" "$BUDGET_TOTAL0")
    else
        cpu=$(budget_cpu_use "$BUDGET_BUSY" "$BUDGET_TOTAL")
        read -r BUDGET_BUSY BUDGET_TOTAL <<<"$(budget_cpu_ticks)"
    fi
    if ((b > 0 && $2 > b)); then
        BUDGET_OVERRUNS+=("$1 ($2 s of $b s)")
        BUDGET_LINE="$1 took $2 s: OVER its budget of $b s$cpu"
    elif ((b > 0)); then
        BUDGET_LINE="$1 took $2 s (budget $b s$cpu)"
    else
        BUDGET_LINE="$1 took $2 s$cpu"
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
