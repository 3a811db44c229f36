// SPDX-License-Identifier: BSD-2-Clause
// The chart: a gnuplot script and its data. Run as `gnuplot
// DIR/throughput.gp` from any directory, the script reads DIR/throughput.dat
// and DIR/pps.dat and writes DIR/throughput.png (pngcairo), stacked panels:
// clustered bars of median Gbit/s, one group per (dir, streams, MTU), one
// colour per config, min-max error bars, failed runs counted in the legend;
// when the report has packet-rate cells, median datagrams received per
// second, one group per (dir, payload); when it has fio cells, each guest
// disk config's IO/s as a fraction of the host's (fio.dat), one group per
// (rw, bs, depth); when a guest config has vsock cells, median AF_VSOCK
// Gbit/s per direction (the last block of throughput.dat), the host's
// loopback among the bars; each mode's vCPU exits and VMM interrupts per
// GB; when iperf cells have outside counters, each config's KVM exits per
// GB read from outside the VMM. The peer VMM's configs (qemu-*) are
// further configs, after kvmmio's, in colours of their own.
#pragma once

#include <string>

#include "bench/report/report.h"

namespace kvmmio::report {

inline constexpr const char* kGnuplotScriptName = "throughput.gp";
inline constexpr const char* kGnuplotDataName = "throughput.dat";
inline constexpr const char* kGnuplotPpsDataName = "pps.dat";
inline constexpr const char* kGnuplotFioDataName = "fio.dat";
inline constexpr const char* kGnuplotImageName = "throughput.png";

struct GnuplotFiles {
  std::string script;  // contents of throughput.gp
  std::string data;    // contents of throughput.dat
  std::string pps_data;  // contents of pps.dat (written, if unused, when there are no pps cells)
  std::string fio_data;  // contents of fio.dat (likewise for fio cells)
};

GnuplotFiles render_gnuplot(const Report& report, const std::string& title);

}  // namespace kvmmio::report
