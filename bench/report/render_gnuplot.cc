// SPDX-License-Identifier: BSD-2-Clause
// render_gnuplot: the data file has two blocks (gnuplot's `index`). Block 0:
// one row per group and three columns (median, min, max) per config, "-"
// where a config has no value; plotted as a histogram with error bars.
// Block 1: one row per mode with VMM counters, its vCPU exits and VMM
// interrupts per GB over all its runs; plotted as a second panel.
#include "bench/report/render_gnuplot.h"

#include <algorithm>
#include <cstdio>

namespace kvmmio::report {
namespace {

// gnuplot's single-quoted strings have one escape: a doubled quote.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string value(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", *v);
  return buf;
}

bool same_group(const IperfCell& a, const IperfCell& b) {
  return a.mtu == b.mtu && a.dir == b.dir && a.streams == b.streams;
}

// Configs with iperf cells, in display order (rr-only ones get no bar).
std::vector<std::string> bar_configs(const Report& r) {
  std::vector<std::string> out;
  for (const std::string& c : r.configs)
    for (const IperfCell& cell : r.iperf)
      if (cell.config == c) {
        out.push_back(c);
        break;
      }
  return out;
}

std::string throughput_block(const Report& r, const std::vector<std::string>& configs) {
  std::string out = "# net_report throughput: group, then median min max Gbit/s for each config:\n#";
  for (const std::string& c : configs) out += " " + c;
  out += "\n";
  for (size_t i = 0; i < r.iperf.size(); ++i) {
    const IperfCell& first = r.iperf[i];
    if (i && same_group(r.iperf[i - 1], first)) continue;
    // Data-file strings are double-quoted; the label holds no quotes.
    out += "\"" + std::string(to_string(first.dir)) + " " + std::to_string(first.streams) + "x " +
           std::to_string(first.mtu) + "\"";
    for (const std::string& config : configs) {
      const IperfCell* cell = nullptr;
      for (size_t j = i; j < r.iperf.size() && same_group(r.iperf[j], first); ++j)
        if (r.iperf[j].config == config) cell = &r.iperf[j];
      if (cell)
        out += " " + value(cell->median_gbps) + " " + value(cell->min_gbps) + " " + value(cell->max_gbps);
      else
        out += " - - -";
    }
    out += "\n";
  }
  return out;
}

// One mode's counters per GB over all its cells: each cell's per-GB figure
// weighted by the bytes it received, i.e. the mode's total count / total GB.
struct ModeCounters {
  std::string config;
  double vcpu_exits_per_gb = 0, vmm_irqs_per_gb = 0;
};

std::vector<ModeCounters> mode_counters(const Report& r, const std::vector<std::string>& configs) {
  std::vector<ModeCounters> out;
  for (const std::string& config : configs) {
    double bytes = 0, exits = 0, irqs = 0;
    for (const IperfCell& cell : r.iperf) {
      if (cell.config != config || !cell.per_gb || cell.bytes == 0) continue;
      const double gb = static_cast<double>(cell.bytes) / 1e9;
      bytes += gb;
      exits += cell.per_gb->vcpu_exits * gb;
      irqs += cell.per_gb->vmm_irqs * gb;
    }
    if (bytes > 0) out.push_back({config, exits / bytes, irqs / bytes});
  }
  return out;
}

std::string counters_block(const std::vector<ModeCounters>& modes) {
  std::string out = "# net_report counters: mode, vCPU exits per GB, VMM interrupts per GB (all its runs)\n";
  for (const ModeCounters& m : modes) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " %.1f %.1f\n", m.vcpu_exits_per_gb, m.vmm_irqs_per_gb);
    out += "\"" + m.config + "\"" + buf;
  }
  return out;
}

// "n = 3 runs per bar", or a range where cells differ.
std::string runs_per_bar(const Report& r) {
  unsigned lo = ~0u, hi = 0;
  for (const IperfCell& c : r.iperf) {
    lo = std::min(lo, c.runs_ok + c.runs_failed);
    hi = std::max(hi, c.runs_ok + c.runs_failed);
  }
  if (hi == 0) return "no runs";
  return "n = " + (lo == hi ? std::to_string(hi) : std::to_string(lo) + "-" + std::to_string(hi)) +
         (hi == 1 ? " run per bar" : " runs per bar");
}

// A config's legend entry, with its failed runs (their bars show only the
// runs that completed; report.txt lists each failure).
std::string legend(const Report& r, const std::string& config) {
  unsigned ok = 0, failed = 0;
  for (const IperfCell& c : r.iperf)
    if (c.config == config) ok += c.runs_ok, failed += c.runs_failed;
  if (failed == 0) return config;
  return config + " (" + std::to_string(failed) + " of " + std::to_string(ok + failed) + " runs failed)";
}

std::string script(const Report& r, const std::vector<std::string>& configs,
                   const std::vector<ModeCounters>& modes, const std::string& title) {
  std::string out =
      "# Written by net_report. Run `gnuplot throughput.gp` from any directory: the data and\n"
      "# the PNG are beside this script, found through ARG0 (the script's path).\n"
      "here = '.'\n"
      "found = 0\n"
      "do for [i = strlen(ARG0):1:-1] {\n"
      "  if (!found && ARG0[i:i] eq '/') { here = ARG0[1:i-1]; found = 1 }\n"
      "}\n"
      "data = here . '/" + std::string(kGnuplotDataName) + "'\n"
      "set terminal pngcairo noenhanced size 1280,1024 font 'sans,10'\n"
      "set output here . '/" + std::string(kGnuplotImageName) + "'\n"
      "set multiplot layout 2,1 title " + quoted(title) + "\n"
      "set datafile missing '-'\n"
      "set grid ytics\n"
      "set key outside right top\n"
      "set style fill solid 0.8 border -1\n"
      "set yrange [0:*]\n"
      "set offsets 0, 0, graph 0.08, 0  # headroom above the tallest bar\n"
      "# Panel 1: throughput.\n"
      "set title " + quoted("iperf3 throughput: median of " + runs_per_bar(r) + ", error bars from min to max") + "\n"
      "set xlabel 'g2h: guest to host, h2g: host to guest; Nx: N parallel iperf3 streams; then the MTU in bytes'\n"
      "set ylabel 'Gbit/s'\n"
      "set style data histogram\n"
      "set style histogram errorbars gap 2 lw 1\n";
  // Histogram columns come in threes per config: median, min, max.
  std::string plots;
  for (size_t i = 0; i < configs.size(); ++i) {
    const size_t col = 2 + 3 * i;
    plots += plots.empty() ? "plot " : ", \\\n     ";
    plots += (i ? "''" : "data") + std::string(" index 0 using ") + std::to_string(col) + ":" +
             std::to_string(col + 1) + ":" + std::to_string(col + 2) + (i ? "" : ":xtic(1)") + " title " +
             quoted(legend(r, configs[i]));
  }
  out += plots.empty() ? "set label 1 'no iperf runs in the raw data' at graph 0.5, 0.5 center\nplot [0:1] NaN notitle\n"
                       : plots + "\n";
  out +=
      "# Panel 2: what each mode costs the VMM.\n"
      "unset label 1\n"
      "set title 'VMM work per GB received, over all runs of each mode (vCPU exits to kvmmio; interrupts kvmmio injected or relayed)'\n"
      "set xlabel 'mode'\n"
      "set ylabel 'count per GB'\n"
      "set style histogram clustered gap 2\n";
  if (modes.empty())
    return out + "set label 1 'no VMM counters in the raw data (host-only runs)' at graph 0.5, 0.5 center\n"
                 "plot [0:1] NaN notitle\nunset multiplot\n";
  // Two boxes per cluster, each 1/(2 + gap) wide: centres at x -/+ 0.125.
  return out +
         "plot data index 1 using 2:xtic(1) title 'vCPU exits/GB', \\\n"
         "     '' index 1 using 3 title 'VMM interrupts/GB', \\\n"
         "     '' index 1 using ($0 - 0.125):2:(sprintf('%.0f', $2)) with labels offset 0,0.7 notitle, \\\n"
         "     '' index 1 using ($0 + 0.125):3:(sprintf('%.0f', $3)) with labels offset 0,0.7 notitle\n"
         "unset multiplot\n";
}

}  // namespace

GnuplotFiles render_gnuplot(const Report& report, const std::string& title) {
  const std::vector<std::string> configs = bar_configs(report);
  const std::vector<ModeCounters> modes = mode_counters(report, configs);
  // Two blank lines end a gnuplot data block: block 1 is `index 1`.
  return {script(report, configs, modes, title),
          throughput_block(report, configs) + "\n\n" + counters_block(modes)};
}

}  // namespace kvmmio::report
