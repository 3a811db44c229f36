// SPDX-License-Identifier: BSD-2-Clause
// render_gnuplot: the data has one row per group and three columns
// (median, min, max) per config, "-" where a config has no value; the
// script plots it as a histogram with error bars.
#include "bench/report/render_gnuplot.h"

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

std::string data(const Report& r, const std::vector<std::string>& configs) {
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

std::string script(const std::vector<std::string>& configs, const std::string& title) {
  std::string out =
      "# Written by net_report. Run `gnuplot throughput.gp` from any directory: the data and\n"
      "# the PNG are beside this script, found through ARG0 (the script's path).\n"
      "here = '.'\n"
      "found = 0\n"
      "do for [i = strlen(ARG0):1:-1] {\n"
      "  if (!found && ARG0[i:i] eq '/') { here = ARG0[1:i-1]; found = 1 }\n"
      "}\n"
      "data = here . '/" + std::string(kGnuplotDataName) + "'\n"
      "set terminal pngcairo noenhanced size 1280,640 font 'sans,10'\n"
      "set output here . '/" + std::string(kGnuplotImageName) + "'\n"
      "set title " + quoted(title) + "\n"
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
  // Histogram columns come in threes per config: median, min, max.
  std::string plots;
  for (size_t i = 0; i < configs.size(); ++i) {
    const size_t col = 2 + 3 * i;
    plots += plots.empty() ? "plot " : ", \\\n     ";
    plots += (i ? "''" : "data") + std::string(" using ") + std::to_string(col) + ":" + std::to_string(col + 1) +
             ":" + std::to_string(col + 2) + (i ? "" : ":xtic(1)") + " title " + quoted(configs[i]);
  }
  if (plots.empty())
    return out + "set label 'no iperf runs in the raw data' at graph 0.5, 0.5 center\nplot [0:1] NaN notitle\n";
  return out + plots + "\n";
}

}  // namespace

GnuplotFiles render_gnuplot(const Report& report, const std::string& title) {
  const std::vector<std::string> configs = bar_configs(report);
  return {script(configs, title), data(report, configs)};
}

}  // namespace kvmmio::report
