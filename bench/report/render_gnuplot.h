// SPDX-License-Identifier: BSD-2-Clause
// The throughput chart: a gnuplot script and its data. Run as
// `gnuplot DIR/throughput.gp` from any directory, the script reads
// DIR/throughput.dat and writes DIR/throughput.png (pngcairo): clustered
// bars of median Gbit/s, one group per (dir, streams, MTU), one colour per
// config, min-max error bars.
#pragma once

#include <string>

#include "bench/report/report.h"

namespace kvmmio::report {

inline constexpr const char* kGnuplotScriptName = "throughput.gp";
inline constexpr const char* kGnuplotDataName = "throughput.dat";
inline constexpr const char* kGnuplotImageName = "throughput.png";

struct GnuplotFiles {
  std::string script;  // contents of throughput.gp
  std::string data;    // contents of throughput.dat
};

GnuplotFiles render_gnuplot(const Report& report, const std::string& title);

}  // namespace kvmmio::report
