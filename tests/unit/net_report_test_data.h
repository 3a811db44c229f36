// SPDX-License-Identifier: BSD-2-Clause
// Shared by the net_report tests: parsing raw text held in a string, and a
// small raw file like the main job writes, with numbers chosen so that the
// expected medians, ratios and per-GB figures are exact.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "bench/report/input_error.h"
#include "bench/report/raw_parser.h"
#include "bench/report/records.h"

namespace kvmmio::report::test {

// Raw text as if read from a file named "raw" (micro paths from `dir`).
inline RawData parse(std::string_view text, const std::string& dir = ".") {
  RawData d;
  parse_raw(text, "raw", dir, d);
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
inline constexpr const char* kSampleRuns = R"(# net_report sample
meta gic=3 seconds=5 repeats=3 kernel=6.1.0-57-arm64

iperf config=host mtu=1500 dir=g2h streams=1 rep=1 bytes=6250000000 seconds=5 bps=10000000000
iperf config=host mtu=1500 dir=g2h streams=1 rep=2 bytes=7500000000 seconds=5 bps=12000000000
iperf config=host mtu=1500 dir=g2h streams=1 rep=3 bytes=6875000000 seconds=5 bps=11000000000
iperf config=vhost-irqfd mtu=1500 dir=g2h streams=1 rep=1 bytes=5000000000 seconds=5 bps=8e9 vcpu_exits=500 wakeups=0 injected=0 relayed=0 trapped=0 polled=0 guest_irqs=20000
iperf config=vhost-irqfd mtu=1500 dir=g2h streams=1 rep=2 bytes=5000000000 seconds=5 bps=9.5e9 vcpu_exits=1500 wakeups=0 injected=0 relayed=0 trapped=0 polled=0 guest_irqs=30000
iperf config=user-trap mtu=1500 dir=g2h streams=1 rep=1 bytes=1000000000 seconds=5 bps=2e9 vcpu_exits=400000 wakeups=1000 injected=3000 relayed=1000 trapped=200000 polled=0 guest_irqs=4000
iperf config=user-trap mtu=1500 dir=g2h streams=1 rep=2 failed=iperf3_timeout
iperf config=user-trap mtu=1500 dir=g2h streams=1 rep=3 bytes=1000000000 seconds=5 bps=3e9 vcpu_exits=600000 wakeups=3000 injected=5000 relayed=3000 trapped=400000 polled=0 guest_irqs=6000
rr config=host mtu=1500 rep=1 transactions=100000 seconds=5 tps=20000 p50_us=40 p90_us=50 p99_us=80
rr config=vhost-irqfd mtu=1500 rep=1 transactions=50000 seconds=5 tps=10000 p50_us=100 p90_us=120 p99_us=200
)";
inline constexpr const char* kSampleMicroLine = "micro platform=host-x86_64 file=micro.json\n";

}  // namespace kvmmio::report::test
