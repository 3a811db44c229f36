// SPDX-License-Identifier: BSD-2-Clause
// Shared by the net_report tests: parsing raw JSON lines held in a string,
// and a small raw file like the main job writes, with numbers chosen so that
// the expected medians, ratios and per-GB figures are exact.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "bench/report/input_error.h"
#include "bench/report/read_runs.h"
#include "bench/report/records.h"

namespace kvmmio::report::test {

// Raw JSON lines as if read from a file named "raw" (micro paths from `dir`).
inline RawData parse(std::string_view text, const std::string& dir = ".") {
  RawData d;
  parse_runs(text, "raw", dir, d);
  return d;
}

// The InputError message parsing `text` gives, or "no error".
inline std::string parse_error(std::string_view text, const std::string& dir = ".") {
  try {
    parse(text, dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

inline constexpr const char* kMicroJson =
    R"({"arch":"x86_64","stores":2000,"irqs":200,"repeats":3,)"
    R"("us":{"ioeventfd":2.5,"ioeventfd_raw":2.25,"mmio_exit":10,"mmio_exit_raw":9.5,"irqfd":25,"irq_line_relay":30}})";

// host and vhost-irqfd at MTU 1500 g2h 1 stream; user-trap too, with one
// failed run; a latency pair. kSampleMicroLine adds one micro platform,
// whose file (kMicroJson as micro.json) the test must write.
//   host:        10, 12, 11 Gbit/s           -> median 11, spread 2/11
//   vhost-irqfd: 8, 9.5 (even n)             -> median 8.75
//   user-trap:   2, 3 and a failed run       -> median 2.5
inline constexpr const char* kSampleRuns = R"({"kind":"meta","gic":"3","seconds":"5","repeats":"3","kernel":"6.1.0-57-arm64"}

{"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":6250000000,"seconds":5,"bps":10000000000}
{"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":2,"bytes":7500000000,"seconds":5,"bps":12000000000}
{"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":3,"bytes":6875000000,"seconds":5,"bps":11000000000}
{"kind":"iperf","config":"vhost-irqfd","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":5000000000,"seconds":5,"bps":8000000000,"counters":{"vcpu_exits":500,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":20000}}
{"kind":"iperf","config":"vhost-irqfd","mtu":1500,"dir":"g2h","streams":1,"rep":2,"bytes":5000000000,"seconds":5,"bps":9500000000,"counters":{"vcpu_exits":1500,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":30000}}
{"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":1000000000,"seconds":5,"bps":2000000000,"counters":{"vcpu_exits":400000,"wakeups":1000,"injected":3000,"relayed":1000,"trapped":200000,"polled":0,"guest_irqs":4000}}
{"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":2,"failed":"iperf3_timeout"}
{"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":3,"bytes":1000000000,"seconds":5,"bps":3000000000,"counters":{"vcpu_exits":600000,"wakeups":3000,"injected":5000,"relayed":3000,"trapped":400000,"polled":0,"guest_irqs":6000}}
{"kind":"rr","config":"host","mtu":1500,"rep":1,"transactions":100000,"seconds":5,"tps":20000,"p50_us":40,"p90_us":50,"p99_us":80}
{"kind":"rr","config":"vhost-irqfd","mtu":1500,"rep":1,"transactions":50000,"seconds":5,"tps":10000,"p50_us":100,"p90_us":120,"p99_us":200}
)";
// Packet-rate runs, for the tests that add them to kSampleRuns:
//   host 64 g2h:        100000, 120000 pkt/s, no loss -> median 110000
//   vhost-irqfd 64 g2h: 15000 (25% lost), 25000 (none) -> median 20000,
//                       loss 12.5%; 1600 exits and 800 guest irqs over
//                       80000 datagrams received: 20000 and 10000 per Mpkt
//   user-trap 1472 h2g: one failed run
inline constexpr const char* kSamplePps = R"({"kind":"pps","config":"host","mtu":1500,"payload":64,"dir":"g2h","rep":1,"sent":100000,"received":100000,"lost":0,"seconds":1,"pps":100000}
{"kind":"pps","config":"host","mtu":1500,"payload":64,"dir":"g2h","rep":2,"sent":120000,"received":120000,"lost":0,"seconds":1,"pps":120000}
{"kind":"pps","config":"vhost-irqfd","mtu":1500,"payload":64,"dir":"g2h","rep":1,"sent":40000,"received":30000,"lost":10000,"seconds":2,"pps":15000,"counters":{"vcpu_exits":600,"wakeups":600,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":300}}
{"kind":"pps","config":"vhost-irqfd","mtu":1500,"payload":64,"dir":"g2h","rep":2,"sent":50000,"received":50000,"lost":0,"seconds":2,"pps":25000,"counters":{"vcpu_exits":1000,"wakeups":1000,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":500}}
{"kind":"pps","config":"user-trap","mtu":1500,"payload":1472,"dir":"h2g","rep":1,"failed":"udp_pps_failed"}
)";
// fio runs, for the tests that add them to kSampleRuns:
//   host randread 4k q32:   80000, 120000 IO/s -> median 100000
//   blk-io_uring-mirror:    4000 IO/s -> 0.04 x host; no exits, 2000
//                           wake-ups and 1200 guest irqs over 4000 requests
//                           and 0.02 GB (bytes chosen for round figures):
//                           500000 and 300000 per Mreq, 100000 and 60000 per GB
//   blk-io_uring-trap read 1M q1: one failed run
inline constexpr const char* kSampleFio = R"({"kind":"fio","config":"host","rw":"randread","bs":4096,"depth":32,"rep":1,"bytes":327680000,"ios":80000,"seconds":1,"iops":80000,"bw_bps":327680000}
{"kind":"fio","config":"host","rw":"randread","bs":4096,"depth":32,"rep":2,"bytes":491520000,"ios":120000,"seconds":1,"iops":120000,"bw_bps":491520000}
{"kind":"fio","config":"blk-io_uring-mirror","rw":"randread","bs":4096,"depth":32,"rep":1,"bytes":20000000,"ios":4000,"seconds":1,"iops":4000,"bw_bps":16384000,"counters":{"vcpu_exits":0,"wakeups":2000,"injected":1000,"relayed":0,"trapped":0,"polled":0,"guest_irqs":1200}}
{"kind":"fio","config":"blk-io_uring-trap","rw":"read","bs":1048576,"depth":1,"rep":1,"failed":"fio_failed"}
)";
// Runs tried more than once, as bench/net-compare.sh's attempt() writes
// them: a record per attempt, "attempt" and "outcome" after the run's
// identity. iperf at MTU 1500 g2h 1 stream:
//   host rep 1:      failed (iperf3_failed), then ok at 10 Gbit/s
//   host rep 2:      tried once, 12 Gbit/s -> 2 ok, 1 retried, median 11
//   user-trap rep 1: failed twice (iperf3_failed, then iperf3_timeout)
//   user-trap rep 2: tried once, 2 Gbit/s -> 1 ok, 1 failed, 1 retried
inline constexpr const char* kSampleAttempts = R"({"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,"attempt":1,"outcome":"failed","failed":"iperf3_failed"}
{"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,"attempt":2,"outcome":"ok","bytes":6250000000,"seconds":5,"bps":10000000000}
{"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":2,"bytes":7500000000,"seconds":5,"bps":12000000000}
{"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":1,"attempt":1,"outcome":"failed","failed":"iperf3_failed"}
{"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":1,"attempt":2,"outcome":"failed","failed":"iperf3_timeout"}
{"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":2,"bytes":1250000000,"seconds":5,"bps":2000000000}
)";

// The peer VMM and the counters read from outside it, for the tests that
// add them to kSampleRuns and kSamplePps. iperf at MTU 1500 g2h 1 stream:
//   qemu-pci:           10, 6 Gbit/s -> median 8, the peer baseline; over
//                       1e10 bytes 50000 KVM exits, 2000 MMIO exits to user,
//                       MMIO exits in the kernel null in one run (left out),
//                       10000 halt wake-ups, 1000 ctxt switches, 4000 ms of
//                       VMM CPU, 20000 guest irqs: per GB 5000, 200, -,
//                       1000, 100, 400, 2000; the CPU over 10 s: 40% of a core
//   qemu-mmio:          4 Gbit/s -> 0.5 x qemu-pci; written before
//                       vmm_cpu_ms (six counters); over 2e9 bytes 400000,
//                       300000, 0, 2000, null, 6000: per GB 200000, 150000,
//                       0, 1000, -, -, 3000; no % of a core
//   vhost-irqfd-mirror: 12 Gbit/s -> 1.5 x qemu-pci, kvmmio's counters and
//                       the outside ones; over 3e9 bytes 3000, 0, 1500, 600,
//                       300, 0 ms, 9000: per GB 1000, 0, 500, 200, 100, 0,
//                       3000; 0% of a core (0, not unreadable)
// The others against qemu-pci: host 11 / 8 = 1.375, vhost-irqfd 8.75 / 8 =
// 1.09375, user-trap 2.5 / 8 = 0.3125.
// rr at MTU 1500 (p50, p99 us): qemu-pci 80, 400; qemu-mmio 120, 600 ->
// 1.5 and 1.5 x qemu-pci; host 0.5 and 0.2; vhost-irqfd 1.25 and 0.5.
// pps at MTU 1500, 64 B, g2h: qemu-pci 40000 pkt/s (vhost-irqfd: 0.5 x);
// over 80000 datagrams 8000, 400, 2000, 4000, 200, 1000 ms, 1000: per Mpkt
// 100000, 5000, 25000, 50000, 2500, 12500, 12500; 1000 ms over 2 s: 50% of
// a core. qemu-mmio: 30000 pkt/s, one run of two without "outside" (no
// outside rates, no % of a core).
inline constexpr const char* kSamplePeer = R"({"kind":"iperf","config":"qemu-pci","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":6000000000,"seconds":5,"bps":10000000000,"outside":{"kvm_exits":30000,"kvm_mmio_exit_user":1000,"kvm_mmio_exit_kernel":20000,"kvm_halt_wakeup":5000,"vmm_ctxt_switches":400,"vmm_cpu_ms":1500,"guest_irqs":10000}}
{"kind":"iperf","config":"qemu-pci","mtu":1500,"dir":"g2h","streams":1,"rep":2,"bytes":4000000000,"seconds":5,"bps":6000000000,"outside":{"kvm_exits":20000,"kvm_mmio_exit_user":1000,"kvm_mmio_exit_kernel":null,"kvm_halt_wakeup":5000,"vmm_ctxt_switches":600,"vmm_cpu_ms":2500,"guest_irqs":10000}}
{"kind":"iperf","config":"qemu-mmio","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":2000000000,"seconds":5,"bps":4000000000,"outside":{"kvm_exits":400000,"kvm_mmio_exit_user":300000,"kvm_mmio_exit_kernel":0,"kvm_halt_wakeup":2000,"vmm_ctxt_switches":null,"guest_irqs":6000}}
{"kind":"iperf","config":"vhost-irqfd-mirror","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":3000000000,"seconds":5,"bps":12000000000,"counters":{"vcpu_exits":300,"wakeups":600,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":9000},"outside":{"kvm_exits":3000,"kvm_mmio_exit_user":0,"kvm_mmio_exit_kernel":1500,"kvm_halt_wakeup":600,"vmm_ctxt_switches":300,"vmm_cpu_ms":0,"guest_irqs":9000}}
{"kind":"rr","config":"qemu-pci","mtu":1500,"rep":1,"transactions":60000,"seconds":5,"tps":12500,"p50_us":80,"p90_us":100,"p99_us":400}
{"kind":"rr","config":"qemu-mmio","mtu":1500,"rep":1,"transactions":40000,"seconds":5,"tps":8000,"p50_us":120,"p90_us":150,"p99_us":600}
{"kind":"pps","config":"qemu-pci","mtu":1500,"payload":64,"dir":"g2h","rep":1,"sent":80000,"received":80000,"lost":0,"seconds":2,"pps":40000,"outside":{"kvm_exits":8000,"kvm_mmio_exit_user":400,"kvm_mmio_exit_kernel":2000,"kvm_halt_wakeup":4000,"vmm_ctxt_switches":200,"vmm_cpu_ms":1000,"guest_irqs":1000}}
{"kind":"pps","config":"qemu-mmio","mtu":1500,"payload":64,"dir":"g2h","rep":1,"sent":60000,"received":60000,"lost":0,"seconds":2,"pps":30000,"outside":{"kvm_exits":1,"kvm_mmio_exit_user":1,"kvm_mmio_exit_kernel":1,"kvm_halt_wakeup":1,"vmm_ctxt_switches":1,"vmm_cpu_ms":1,"guest_irqs":1}}
{"kind":"pps","config":"qemu-mmio","mtu":1500,"payload":64,"dir":"g2h","rep":2,"sent":60000,"received":60000,"lost":0,"seconds":2,"pps":30000}
)";

// A guest fio run with outside counters only: over 4000 requests and 0.02
// GB, 400 KVM exits, 0 to user, 200 in the kernel, 2000 halt wake-ups,
// context switches null, 350 ms of VMM CPU, 1200 guest irqs: per Mreq
// 100000, 0, 50000, 500000, -, 87500, 300000; per GB 20000, 0, 10000,
// 100000, -, 17500, 60000; 350 ms over 1 s: 35% of a core.
inline constexpr const char* kFioOutside =
    R"({"kind":"fio","config":"blk-io_uring-mirror","rw":"randread","bs":4096,"depth":32,"rep":1,"bytes":20000000,)"
    R"("ios":4000,"seconds":1,"iops":4000,"bw_bps":16384000,"outside":{"kvm_exits":400,"kvm_mmio_exit_user":0,)"
    R"("kvm_mmio_exit_kernel":200,"kvm_halt_wakeup":2000,"vmm_ctxt_switches":null,"vmm_cpu_ms":350,)"
    R"("guest_irqs":1200}})" "\n";

// The seven outside counters as a record's "outside" member, after a comma.
inline constexpr const char* kOutside =
    R"(,"outside":{"kvm_exits":1,"kvm_mmio_exit_user":2,"kvm_mmio_exit_kernel":3,"kvm_halt_wakeup":4,)"
    R"("vmm_ctxt_switches":5,"vmm_cpu_ms":7,"guest_irqs":6})";

// The same as a raw file written before vmm_cpu_ms has it: six, read with
// vmm_cpu_ms null.
inline constexpr const char* kOutsideSix =
    R"(,"outside":{"kvm_exits":1,"kvm_mmio_exit_user":2,"kvm_mmio_exit_kernel":3,"kvm_halt_wakeup":4,)"
    R"("vmm_ctxt_switches":5,"guest_irqs":6})";

// vsock runs (bench's AF_VSOCK stream test), for the tests that add them
// to kSampleRuns:
//   host g2h:         40, 60 Gbit/s (the host's vsock loopback) -> median 50
//   vsock-mirror g2h: 10, 15 Gbit/s -> median 12.5, spread 40%, 0.25 x
//                     host; over 6.25 GB received 125 vCPU exits and 12500
//                     guest irqs: 20 and 2000 per GB; outside 1250 KVM
//                     exits, 6250 halt wake-ups, 5 ctxt switches, 40 ms of
//                     VMM CPU, 12500 guest irqs: per GB 200, 0, 0, 1000,
//                     0.8, 6.4, 2000; 40 ms over 4 s: 1% of a core
//   host h2g:         30 Gbit/s
//   vsock-mirror h2g: 12 Gbit/s -> 0.4 x host (the h2g host's, not the
//                     g2h one's); 600 guest irqs over 3 GB: 200 per GB;
//                     and a failed run
inline constexpr const char* kSampleVsock = R"({"kind":"vsock","config":"host","dir":"g2h","rep":1,"bytes":10000000000,"seconds":2,"bps":40000000000}
{"kind":"vsock","config":"host","dir":"g2h","rep":2,"bytes":15000000000,"seconds":2,"bps":60000000000}
{"kind":"vsock","config":"vsock-mirror","dir":"g2h","rep":1,"bytes":2500000000,"seconds":2,"bps":10000000000,"counters":{"vcpu_exits":125,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":5000},"outside":{"kvm_exits":625,"kvm_mmio_exit_user":0,"kvm_mmio_exit_kernel":0,"kvm_halt_wakeup":2500,"vmm_ctxt_switches":2,"vmm_cpu_ms":40,"guest_irqs":5000}}
{"kind":"vsock","config":"vsock-mirror","dir":"g2h","rep":2,"bytes":3750000000,"seconds":2,"bps":15000000000,"counters":{"vcpu_exits":0,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":7500},"outside":{"kvm_exits":625,"kvm_mmio_exit_user":0,"kvm_mmio_exit_kernel":0,"kvm_halt_wakeup":3750,"vmm_ctxt_switches":3,"vmm_cpu_ms":0,"guest_irqs":7500}}
{"kind":"vsock","config":"host","dir":"h2g","rep":1,"bytes":7500000000,"seconds":2,"bps":30000000000}
{"kind":"vsock","config":"vsock-mirror","dir":"h2g","rep":1,"bytes":3000000000,"seconds":2,"bps":12000000000,"counters":{"vcpu_exits":0,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":600}}
{"kind":"vsock","config":"vsock-mirror","dir":"h2g","rep":2,"failed":"vsock_stream_failed"}
)";

inline constexpr const char* kSampleMicroLine = R"({"kind":"micro","platform":"host-x86_64","file":"micro.json"})" "\n";

// An iperf record of config at MTU 1500, g2h, 1 stream: `gbps` received
// over 1000 bytes, `extra` members appended (e.g. R"(,"counters":{...})").
inline std::string iperf_line(const std::string& config, unsigned rep, double gbps, const std::string& extra = "") {
  return R"({"kind":"iperf","config":")" + config + R"(","mtu":1500,"dir":"g2h","streams":1,"rep":)" +
         std::to_string(rep) + R"(,"bytes":1000,"seconds":1,"bps":)" + std::to_string(gbps * 1e9) + extra + "}\n";
}

// The seven counters as a record's "counters" member, after a comma.
inline constexpr const char* kCounters =
    R"(,"counters":{"vcpu_exits":1,"wakeups":2,"injected":3,"relayed":4,"trapped":5,"polled":6,"guest_irqs":7})";

}  // namespace kvmmio::report::test
