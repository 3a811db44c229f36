#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# outside-counters.sh [PID]: the counters any VMM's cell can be read with
# from outside the VMM, one JSON object on stdout, so that kvmmio's cells
# and a peer VMM's (QEMU) are counted by one rule. POSIX sh,
# busybox is enough (it runs in L1 beside bench/net-compare.sh).
#
#   kvm_exits, kvm_mmio_exit_user, kvm_mmio_exit_kernel, kvm_halt_wakeup
#       KVM's debugfs counters (exits, mmio_exit_user, mmio_exit_kernel,
#       halt_wakeup) of PID's own VM: KVM keeps a directory per VM,
#       PID-VMFD (VMFD the fd KVM_CREATE_VM returned, found among PID's
#       fds as a link to "anon_inode:kvm-vm"), with the same files as
#       the totals over all VMs beside it, its vCPUs' summed; so another
#       VM on the host cannot add to them. Without PID, the totals. null
#       where debugfs is not mounted, the file is missing (a kernel
#       without it) or PID has no VM (yet, or any more), never 0, so a
#       report cannot take "unreadable" for "none".
#   kvm_exits_all_vms
#       the total of exits over all VMs, read right after PID's VM's: the
#       cross-check. A caller's delta of it above kvm_exits' says another
#       VM ran meanwhile (or PID's VM exited between the two reads: a few
#       at most). null where unreadable.
#   vmm_ctxt_switches
#       voluntary + involuntary context switches of PID's threads other
#       than its vCPU threads and vhost workers: the VMM's own work
#       (relays, event loops, I/O threads). vCPU threads are left out
#       because their switches follow the guest's halts, which
#       kvm_halt_wakeup counts; vhost workers (threads named vhost-PID
#       inside the VMM's process from Linux 6.4) because they are the
#       kernel's datapath, not the VMM's (the names: oc_role below).
#       null without PID, once PID is gone, or when a thread's status
#       has not both counts.
#   vmm_cpu_ms
#       user + system CPU time of the VMM's own work, the same threads, in
#       milliseconds: the figure a storage target such as Firecracker's
#       (1 GiB/s at no more than 70% of one host core) is stated in.
#       Read as the whole process's (fields 14 and 15 of /proc/PID/stat,
#       which keep the time of threads that have exited: io_uring's
#       iou-wrk-PID workers, which run the VMM's requests and are retired
#       when idle) less its vCPU threads' and vhost workers' (the same
#       fields of /proc/PID/task/TID/stat, read first). Each figure is in
#       clock ticks (getconf CLK_TCK, 100 where getconf is missing:
#       busybox), so a reading is good to a tick or so per vCPU: a caller's
#       delta over an idle VMM can come out a tick or two below 0
#       (bench/net-compare.sh reads that as 0). null without PID or
#       once PID is gone.
#
# vmm_ctxt_switches is of the threads alive when read: one that exits
# takes its count with it, so a caller's delta can come out low, or
# negative.
#
# Environment (for tests): KVMMIO_PROC (default /proc) and
# KVMMIO_KVM_DEBUGFS (default /sys/kernel/debug/kvm).

# oc_role NAME: what a thread named NAME is, into $oc_r: "vcpu" (kvmmio's
# "vcpuN", vmm/machine/vcpu_runner_arm64.cc; QEMU's "CPU N/KVM"), "vhost"
# (vhost-net's worker "vhost-PID": a kernel thread of its own before Linux
# 6.4, a thread of the VMM's process after) or "vmm" (the VMM's own work).
# The one place these names are known: bench/net-compare.sh's --pin
# sources this file with OUTSIDE_COUNTERS_LIB=1 for it.
oc_role() {
    case $1 in
    vcpu[0-9]* | "CPU "*/KVM) oc_r=vcpu ;;
    vhost-[0-9]*) oc_r=vhost ;;
    *) oc_r=vmm ;;
    esac
}
# Sourced for oc_role: nothing more (the rest reads the caller's $1).
if [ "${OUTSIDE_COUNTERS_LIB:-}" = 1 ]; then return 0; fi

proc=${KVMMIO_PROC:-/proc}
kvm=${KVMMIO_KVM_DEBUGFS:-/sys/kernel/debug/kvm}
pid=${1:-}

# oc_file FILE: FILE's count, or null.
oc_file() {
    oc_v=$(cat "$1" 2>/dev/null) || oc_v=''
    case $oc_v in '' | *[!0-9]*) echo null ;; *) echo "$oc_v" ;; esac
}
# oc_vms: $oc_vms, the debugfs directories of PID's VMs (one for a VMM;
# summed if more), empty without PID or when it has none.
oc_vms() {
    oc_vms=''
    [ -n "$pid" ] || return 0
    for oc_fd in "$proc/$pid"/fd/*; do
        [ "$(readlink "$oc_fd" 2>/dev/null)" = anon_inode:kvm-vm ] || continue
        [ ! -d "$kvm/$pid-${oc_fd##*/}" ] || oc_vms="$oc_vms $kvm/$pid-${oc_fd##*/}"
    done
}
# oc_counter NAME: NAME of PID's VMs (null when it has none, or one's is
# unreadable), or without PID the total over all VMs.
oc_counter() {
    [ -n "$pid" ] || { oc_file "$kvm/$1"; return; }
    [ -n "$oc_vms" ] || { echo null; return; }
    oc_sum_vms=0
    for oc_d in $oc_vms; do
        oc_c=$(oc_file "$oc_d/$1")
        [ "$oc_c" != null ] || { echo null; return; }
        oc_sum_vms=$((oc_sum_vms + oc_c))
    done
    echo "$oc_sum_vms"
}

# oc_ticks FILE: utime + stime of a /proc stat FILE, in clock ticks, into
# $oc_t_ticks; status 1 where it cannot be read. Field 2, comm, is in
# parentheses and may hold spaces and ')': the fields are counted after
# the last ')', where field 3 is the first, so utime (14) and stime (15)
# are the 12th and 13th.
oc_ticks() {
    oc_stat=$(cat "$1" 2>/dev/null) || return 1
    set -f
    # shellcheck disable=SC2086 # the words after comm
    set -- ${oc_stat##*')'}
    set +f
    [ $# -ge 13 ] || return 1
    case ${12}${13} in '' | *[!0-9]*) return 1 ;; esac
    oc_t_ticks=$((${12} + ${13}))
}

# oc_threads: $oc_ctxt and $oc_cpu_ms for PID's own work (not vCPUs, not
# vhost workers), or null for both without PID or once it is gone.
oc_threads() {
    oc_ctxt=null oc_cpu_ms=null
    if [ -z "$pid" ] || [ ! -d "$proc/$pid/task" ]; then return; fi
    oc_hz=$(getconf CLK_TCK 2>/dev/null) || oc_hz=''
    case $oc_hz in '' | 0 | *[!0-9]*) oc_hz=100 ;; esac
    oc_sum=0 oc_others=0 oc_unknown=0
    for oc_t in "$proc/$pid"/task/*; do
        oc_name=$(cat "$oc_t/comm" 2>/dev/null) || continue
        oc_role "$oc_name"
        if [ "$oc_r" != vmm ]; then
            # Read before the whole process's, so that their time cannot
            # run on past what the total holds.
            ! oc_ticks "$oc_t/stat" || oc_others=$((oc_others + oc_t_ticks))
            continue
        fi
        # A thread gone since the list was read takes its count with it
        # (as one that exited before); one alive without both counts in
        # its status leaves the sum unknown: null, not a sum short of it.
        oc_st=$(cat "$oc_t/status" 2>/dev/null) || continue
        oc_n=$(printf '%s\n' "$oc_st" | awk '/^(non)?voluntary_ctxt_switches:/ { s += $2; n++ }
            END { if (n == 2) print s }')
        case $oc_n in '' | *[!0-9]*) oc_unknown=1 ;; *) oc_sum=$((oc_sum + oc_n)) ;; esac
    done
    oc_ticks "$proc/$pid/stat" || return
    [ "$oc_unknown" = 1 ] || oc_ctxt=$oc_sum
    # At least 0: each figure rounds down to a tick.
    oc_own=$((oc_t_ticks - oc_others))
    [ "$oc_own" -ge 0 ] || oc_own=0
    oc_cpu_ms=$((oc_own * 1000 / oc_hz))
}

oc_threads
oc_vms
# exits of PID's VM, then of all VMs at once after it: the closer the two
# reads, the fewer of PID's own exits fall between them.
oc_exits=$(oc_counter exits)
oc_all=$(oc_file "$kvm/exits")
printf '{"kvm_exits":%s,"kvm_mmio_exit_user":%s,"kvm_mmio_exit_kernel":%s,"kvm_halt_wakeup":%s,"vmm_ctxt_switches":%s,"vmm_cpu_ms":%s,"kvm_exits_all_vms":%s}\n' \
    "$oc_exits" "$(oc_counter mmio_exit_user)" "$(oc_counter mmio_exit_kernel)" \
    "$(oc_counter halt_wakeup)" "$oc_ctxt" "$oc_cpu_ms" "$oc_all"
