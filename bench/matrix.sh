# SPDX-License-Identifier: BSD-2-Clause
# matrix.sh: the main job's matrix, each setting declared once with its
# one default. Sourced (POSIX sh, busybox is enough) by scripts/main.sh,
# the arm64 platform's net-compare and startup scenarios and
# bench/net-compare.sh; each takes its own flag (or, in a scenario, its
# KVMMIO_BENCH_* variable) over the default named here, and none keeps a
# default of its own. The configurations themselves are net-modes.sh's.
# shellcheck shell=sh
# shellcheck disable=SC2034 # read by the scripts that source this file

MATRIX_REPEATS=3          # runs of each cell (--repeats)
MATRIX_ORDER=rounds       # rounds: one run of every cell, then again; blocks: a cell's runs together (--order)
MATRIX_SECONDS=5          # iperf3 seconds a run (--seconds)
MATRIX_RR_SECONDS=3       # tcp_rr seconds a run
MATRIX_PPS_SECONDS=3      # udp_pps seconds a run (--pps-seconds)
MATRIX_PPS_FLOWS=1        # UDP flows a packet-rate run (--pps-flows)
MATRIX_PPS_PAYLOADS=64,1472  # UDP payload bytes (--pps-payloads)
MATRIX_STREAMS=1,4        # iperf3 parallel streams (--streams)
MATRIX_MTUS=1500,9000     # the tap's and the guest's MTU (--mtus)
MATRIX_DIRS=g2h,h2g       # guest to host, host to guest
MATRIX_GUEST_CPUS=1       # the guest's vCPUs (--guest-cpus, --cpus)
MATRIX_GUEST_MEM=512M     # the guest's RAM
# The disk and shared-folder cells (--fio-configs): the host's file, then
# kvmmio's virtio-blk by engine and register access, then virtio-fs.
MATRIX_FIO_CONFIGS=host,blk-io_uring-mirror,blk-io_uring-trap,blk-threads-mirror,blk-threads-trap,fs-mirror
MATRIX_FIO_SECONDS=5      # fio seconds a run (--fio-seconds)
MATRIX_FIO_DEPTHS=1,32    # fio iodepths (--fio-depths)
MATRIX_VSOCK_CONFIGS=host,vsock-mirror  # the AF_VSOCK cells (--vsock-configs)
MATRIX_STARTUP_REPEATS=5  # start-up runs of each VMM (--startup-repeats)

# main.sh --quick: the smallest matrix, every configuration once.
MATRIX_QUICK_REPEATS=1
MATRIX_QUICK_SECONDS=2
MATRIX_QUICK_PPS_SECONDS=2
MATRIX_QUICK_STREAMS=1
MATRIX_QUICK_MTUS=1500
MATRIX_QUICK_FIO_CONFIGS=host,blk-io_uring-mirror,blk-io_uring-trap,fs-mirror
MATRIX_QUICK_FIO_SECONDS=1
MATRIX_QUICK_FIO_DEPTHS=32
MATRIX_QUICK_STARTUP_REPEATS=1
