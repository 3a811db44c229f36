// SPDX-License-Identifier: BSD-2-Clause
// render_gnuplot: each data file has one row per group and three columns
// (median, min, max) per config, "-" where a config has no value; the
// script plots each as a histogram with error bars: throughput, and below
// it the packet rates when there are any.
#include "bench/report/render_gnuplot.h"

#include <array>
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

// How one chart reads its cells: which share a group (a row of the data),
// the group's label, and a cell's median, min and max.
bool same_group(const IperfCell& a, const IperfCell& b) {
  return a.mtu == b.mtu && a.dir == b.dir && a.streams == b.streams;
}
bool same_group(const PpsCell& a, const PpsCell& b) {
  return a.mtu == b.mtu && a.payload == b.payload && a.dir == b.dir;
}
std::string label(const IperfCell& c) {
  return std::string(to_string(c.dir)) + " " + std::to_string(c.streams) + "x " + std::to_string(c.mtu);
}
std::string label(const PpsCell& c) {
  return std::string(to_string(c.dir)) + " " + std::to_string(c.payload) + " B";
}
std::array<std::optional<double>, 3> bar(const IperfCell& c) { return {c.median_gbps, c.min_gbps, c.max_gbps}; }
std::array<std::optional<double>, 3> bar(const PpsCell& c) { return {c.median_pps, c.min_pps, c.max_pps}; }

// Configs with cells, in display order (the others get no bar).
template <class Cell>
std::vector<std::string> bar_configs(const Report& r, const std::vector<Cell>& cells) {
  std::vector<std::string> out;
  for (const std::string& c : r.configs)
    for (const Cell& cell : cells)
      if (cell.config == c) {
        out.push_back(c);
        break;
      }
  return out;
}

template <class Cell>
std::string data(const std::string& what, const std::vector<Cell>& cells, const std::vector<std::string>& configs) {
  std::string out = "# net_report " + what + ": group, then median min max for each config:\n#";
  for (const std::string& c : configs) out += " " + c;
  out += "\n";
  for (size_t i = 0; i < cells.size(); ++i) {
    const Cell& first = cells[i];
    if (i && same_group(cells[i - 1], first)) continue;
    // Data-file strings are double-quoted; the label holds no quotes.
    out += "\"" + label(first) + "\"";
    for (const std::string& config : configs) {
      const Cell* cell = nullptr;
      for (size_t j = i; j < cells.size() && same_group(cells[j], first); ++j)
        if (cells[j].config == config) cell = &cells[j];
      if (cell)
        for (const std::optional<double>& v : bar(*cell)) out += " " + value(v);
      else
        out += " - - -";
    }
    out += "\n";
  }
  return out;
}

// The plot command for the data file in gnuplot variable `var`; histogram
// columns come in threes per config: median, min, max.
std::string plot(const std::string& var, const std::vector<std::string>& configs) {
  std::string plots;
  for (size_t i = 0; i < configs.size(); ++i) {
    const size_t col = 2 + 3 * i;
    plots += plots.empty() ? "plot " : ", \\\n     ";
    plots += (i ? "''" : var) + std::string(" using ") + std::to_string(col) + ":" + std::to_string(col + 1) + ":" +
             std::to_string(col + 2) + (i ? "" : ":xtic(1)") + " title " + quoted(configs[i]);
  }
  return plots + "\n";
}

std::string script(const std::vector<std::string>& gbps_configs, const std::vector<std::string>& pps_configs,
                   const std::string& title) {
  const bool panels = !pps_configs.empty();
  std::string out =
      "# Written by net_report. Run `gnuplot throughput.gp` from any directory: the data and\n"
      "# the PNG are beside this script, found through ARG0 (the script's path).\n"
      "here = '.'\n"
      "found = 0\n"
      "do for [i = strlen(ARG0):1:-1] {\n"
      "  if (!found && ARG0[i:i] eq '/') { here = ARG0[1:i-1]; found = 1 }\n"
      "}\n"
      "data = here . '/" + std::string(kGnuplotDataName) + "'\n" +
      (panels ? "pps_data = here . '/" + std::string(kGnuplotPpsDataName) + "'\n" : "") +
      "set terminal pngcairo noenhanced size 1280," + (panels ? "1200" : "640") + " font 'sans,10'\n"
      "set output here . '/" + std::string(kGnuplotImageName) + "'\n" +
      (panels ? "set multiplot layout 2,1 title " + quoted(title) + "\nset title 'iperf3 throughput'\n"
              : "set title " + quoted(title) + "\n") +
      "set xlabel 'direction, streams, MTU'\n"
      "set ylabel 'Gbit/s (median; error bars: min to max)'\n"
      "set yrange [0:*]\n"
      "set offsets 0, 0, graph 0.08, 0  # headroom above the tallest error bar\n"
      "set grid ytics\n"
      "set key outside right top\n"
      "set datafile missing '-'\n"
      "set style data histogram\n"
      "set style histogram errorbars gap 2 lw 1\n"
      "set style fill solid 0.8 border -1\n";
  if (gbps_configs.empty())
    out += "set label 1 'no iperf runs in the raw data' at graph 0.5, 0.5 center\nplot [0:1] NaN notitle\n"
           "unset label 1\n";
  else
    out += plot("data", gbps_configs);
  if (!panels) return out;
  return out +
         "set title 'UDP packet rate (udp_pps, full rate)'\n"
         "set xlabel 'direction, UDP payload bytes'\n"
         "set ylabel 'datagrams received per s (median; min to max)'\n" +
         plot("pps_data", pps_configs) + "unset multiplot\n";
}

}  // namespace

GnuplotFiles render_gnuplot(const Report& report, const std::string& title) {
  const std::vector<std::string> gbps_configs = bar_configs(report, report.iperf);
  const std::vector<std::string> pps_configs = bar_configs(report, report.pps);
  return {script(gbps_configs, pps_configs, title), data("throughput Gbit/s", report.iperf, gbps_configs),
          data("packet rate, datagrams/s", report.pps, pps_configs)};
}

}  // namespace kvmmio::report
