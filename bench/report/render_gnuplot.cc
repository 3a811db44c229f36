// SPDX-License-Identifier: BSD-2-Clause
// render_gnuplot: throughput.dat has two blocks (gnuplot's `index`). Block
// 0: one row per iperf group and three columns (median, min, max) per
// config, "-" where a config has no value. Block 1: one row per mode with
// VMM counters, its vCPU exits and VMM interrupts per GB over all its runs.
// Block 2 (index 1 when block 1 has no rows), when any iperf cell has
// outside counters: one row per config, its KVM exits per GB read from
// outside the VMM. Last, when the run has vsock cells of a guest config, a
// block of the vsock groups (one per direction) in block 0's shape, the
// host's loopback among its configs; the blocks before it as they were.
// pps.dat has the packet-rate groups in block 0's shape, fio.dat the disk
// groups (guest configs only: IO/s over the host's) and, when the disk
// cells carry VMM counters, a second block: one row per disk config, its
// vCPU exits, VMM wake-ups and guest interrupts per million requests. The
// script plots them as stacked panels: throughput, packet rate and disk
// (when there are any), the disk's counters (likewise), vsock Gbit/s
// (likewise), VMM work per GB, KVM exits per GB read from outside (when
// there are any).
#include "bench/report/render_gnuplot.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "bench/report/kinds.h"

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

// How one chart reads its cells: cells with the same parameters share a
// group (a row of the data); its label, and a cell's median, min and max.
std::string label(const Cell& c) {
  const Params& p = c.params;
  const std::string dir = p.dir.value_or("-");
  if (c.kind == "pps") return dir + " " + std::to_string(p.payload.value_or(0)) + " B";
  if (c.kind == "vsock") return dir;
  if (c.kind == "fio") {
    const unsigned bs = p.bs.value_or(0);
    return p.rw.value_or("-") + " " + (bs % (1024 * 1024) ? std::to_string(bs / 1024) + "k" : std::to_string(bs >> 20) + "M") +
           " q" + std::to_string(p.depth.value_or(0));
  }
  return dir + " " + std::to_string(p.streams.value_or(0)) + "x " + std::to_string(p.mtu.value_or(0));
}
// A run with a host fio cell draws the guests' IO/s as a fraction of the
// host's; one without (e.g. make check's, which leaves the host to the main
// job) draws IO/s themselves.
bool fio_over_host(const std::vector<Cell>& fio) {
  return std::any_of(fio.begin(), fio.end(), [](const Cell& c) { return c.ratio_to_host.has_value(); });
}

std::array<std::optional<double>, 3> bar(const Cell& c, bool over_host) {
  const Range r = c.range(find_kind(c.kind)->headline);
  double scale = c.kind == "iperf" || c.kind == "vsock" ? 1e9 : 1;  // bits/s as Gbit/s
  if (c.kind == "fio" && over_host) {
    // IO/s as a fraction of the host's median: median / ratio_to_host.
    if (!r.median || !c.ratio_to_host || *c.ratio_to_host <= 0) return {};
    scale = *r.median / *c.ratio_to_host;
  }
  const auto scaled = [&](const std::optional<double>& v) { return v ? std::optional(*v / scale) : v; };
  return {scaled(r.median), scaled(r.min), scaled(r.max)};
}

// Configs with cells, in display order (the others get no bar).
std::vector<std::string> bar_configs(const Report& r, const std::vector<Cell>& cells) {
  std::vector<std::string> out;
  for (const std::string& c : r.configs)
    if (std::any_of(cells.begin(), cells.end(), [&](const Cell& cell) { return cell.config == c; })) out.push_back(c);
  return out;
}

std::string data(const std::string& what, const std::vector<Cell>& cells, const std::vector<std::string>& configs,
                 bool over_host = false) {
  std::string out = "# net_report " + what + ": group, then median min max for each config:\n#";
  for (const std::string& c : configs) out += " " + c;
  out += "\n";
  for (size_t i = 0; i < cells.size(); ++i) {
    const Cell& first = cells[i];
    if (i && cells[i - 1].params == first.params) continue;
    // Data-file strings are double-quoted; the label holds no quotes.
    out += "\"" + label(first) + "\"";
    for (const std::string& config : configs) {
      const Cell* cell = nullptr;
      for (size_t j = i; j < cells.size() && cells[j].params == first.params; ++j)
        if (cells[j].config == config) cell = &cells[j];
      if (cell)
        for (const std::optional<double>& v : bar(*cell, over_host)) out += " " + value(v);
      else
        out += " - - -";
    }
    out += "\n";
  }
  return out;
}

// A config's counter over all its cells where it was read: each cell's
// rate (rate_of: Cell::rate or Cell::outside_rate) weighted by the cell's
// amount (bytes received, requests), i.e. total count / total amount, in
// the cells' unit; unset where no cell of the config has it.
using RateOf = std::optional<double> (Cell::*)(const std::string&) const;

std::optional<double> pooled(const std::vector<Cell>& cells, const std::string& config, const char* amount,
                             RateOf rate_of, const std::string& name) {
  double total = 0, weighted = 0;
  for (const Cell& cell : cells) {
    if (cell.config != config) continue;
    const std::optional<double> rate = (cell.*rate_of)(name);
    const double a = cell.sum(amount);
    if (!rate || a == 0) continue;
    total += a;
    weighted += *rate * a;
  }
  return total > 0 ? std::optional(weighted / total) : std::nullopt;
}

// One mode's counters per GB over all its iperf cells.
struct ModeCounters {
  std::string config;
  double vcpu_exits_per_gb = 0, vmm_irqs_per_gb = 0;
};

std::vector<ModeCounters> mode_counters(const std::vector<Cell>& iperf, const std::vector<std::string>& configs) {
  std::vector<ModeCounters> out;
  for (const std::string& config : configs) {
    const std::optional<double> exits = pooled(iperf, config, "bytes", &Cell::rate, "vcpu_exits");
    const std::optional<double> irqs = pooled(iperf, config, "bytes", &Cell::rate, "vmm_irqs");
    if (exits && irqs) out.push_back({config, *exits, *irqs});
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

// One disk config's counters per million requests over all its fio cells.
struct DiskCounters {
  std::string config;
  double vcpu_exits = 0, wakeups = 0, guest_irqs = 0;
};

std::vector<DiskCounters> disk_counters(const std::vector<Cell>& fio, const std::vector<std::string>& configs) {
  std::vector<DiskCounters> out;
  for (const std::string& config : configs) {
    const std::optional<double> exits = pooled(fio, config, "ios", &Cell::rate, "vcpu_exits");
    const std::optional<double> wakeups = pooled(fio, config, "ios", &Cell::rate, "wakeups");
    const std::optional<double> irqs = pooled(fio, config, "ios", &Cell::rate, "guest_irqs");
    if (exits && wakeups && irqs) out.push_back({config, *exits, *wakeups, *irqs});
  }
  return out;
}

std::string disk_counters_block(const std::vector<DiskCounters>& configs) {
  std::string out =
      "# net_report disk counters: config, vCPU exits, VMM wake-ups, guest interrupts per million requests "
      "(all its fio runs)\n";
  for (const DiskCounters& d : configs) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " %.1f %.1f %.1f\n", d.vcpu_exits, d.wakeups, d.guest_irqs);
    out += "\"" + d.config + "\"" + buf;
  }
  return out;
}

// One config's KVM exits per GB read from outside the VMM, over its iperf
// cells where they were readable.
struct OutsideExits {
  std::string config;
  double kvm_exits_per_gb = 0;
};

std::vector<OutsideExits> outside_exits(const std::vector<Cell>& iperf, const std::vector<std::string>& configs) {
  std::vector<OutsideExits> out;
  for (const std::string& config : configs)
    if (const std::optional<double> exits = pooled(iperf, config, "bytes", &Cell::outside_rate, "kvm_exits"))
      out.push_back({config, *exits});
  return out;
}

std::string outside_block(const std::vector<OutsideExits>& configs) {
  std::string out = "# net_report outside: config, KVM exits per GB read from outside the VMM (its iperf runs)\n";
  for (const OutsideExits& o : configs) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.1f\n", o.kvm_exits_per_gb);
    out += "\"" + o.config + "\"" + buf;
  }
  return out;
}

// The peer VMM's configs keep colours of their own (browns, which the
// default cycle lacks), whatever kvmmio configs precede them.
std::string colour(const std::string& config) {
  if (config == "qemu-pci") return " lc rgb '#8b4513'";
  if (config == "qemu-mmio") return " lc rgb '#d2a679'";
  return "";
}

// "n = 3 runs per bar", or a range where cells differ.
std::string runs_per_bar(const std::vector<Cell>& cells) {
  unsigned lo = ~0u, hi = 0;
  for (const Cell& c : cells) {
    lo = std::min(lo, c.runs_ok + c.runs_failed);
    hi = std::max(hi, c.runs_ok + c.runs_failed);
  }
  if (hi == 0) return "no runs";
  return "n = " + (lo == hi ? std::to_string(hi) : std::to_string(lo) + "-" + std::to_string(hi)) +
         (hi == 1 ? " run per bar" : " runs per bar");
}

// A config's legend entry, with its failed runs (its bars show the runs
// that completed; report.txt lists each failure).
std::string legend(const std::vector<Cell>& cells, const std::string& config) {
  unsigned ok = 0, failed = 0;
  for (const Cell& c : cells)
    if (c.config == config) ok += c.runs_ok, failed += c.runs_failed;
  if (failed == 0) return config;
  return config + " (" + std::to_string(failed) + " of " + std::to_string(ok + failed) + " runs failed)";
}

// The plot command for block `index` of the data file in gnuplot variable
// `var`; histogram columns come in threes per config: median, min, max.
std::string plot(const std::string& var, const std::vector<Cell>& cells, const std::vector<std::string>& configs,
                 const std::string& index = "0") {
  std::string plots;
  for (size_t i = 0; i < configs.size(); ++i) {
    const size_t col = 2 + 3 * i;
    plots += plots.empty() ? "plot " : ", \\\n     ";
    plots += (i ? "''" : var) + " index " + index + " using " + std::to_string(col) + ":" +
             std::to_string(col + 1) + ":" + std::to_string(col + 2) + (i ? "" : ":xtic(1)") + " title " +
             quoted(legend(cells, configs[i])) + colour(configs[i]);
  }
  return plots + "\n";
}

// An empty panel that says why. Its y range is given: with `set yrange
// [0:*]` alone, gnuplot stops the whole script at "all points y value
// undefined", and the panels after this one are never drawn.
std::string no_data(const std::string& what) {
  return "set label 1 " + quoted(what) + " at graph 0.5, 0.5 center\nplot [0:1][0:1] NaN notitle\nunset label 1\n";
}

std::string script(const std::vector<Cell>& iperf, const std::vector<Cell>& pps, const std::vector<Cell>& fio,
                   const std::vector<Cell>& vsock, const std::vector<std::string>& gbps_configs,
                   const std::vector<std::string>& pps_configs, const std::vector<std::string>& fio_configs,
                   const std::vector<std::string>& vsock_configs, const std::vector<ModeCounters>& modes,
                   const std::vector<OutsideExits>& outside, const std::vector<DiskCounters>& disk,
                   const std::string& title) {
  const int panels =
      2 + !pps_configs.empty() + !fio_configs.empty() + !disk.empty() + !vsock_configs.empty() + !outside.empty();
  std::string out =
      "# Written by net_report. Run `gnuplot throughput.gp` from any directory: the data and\n"
      "# the PNG are beside this script, found through ARG0 (the script's path).\n"
      "here = '.'\n"
      "found = 0\n"
      "do for [i = strlen(ARG0):1:-1] {\n"
      "  if (!found && ARG0[i:i] eq '/') { here = ARG0[1:i-1]; found = 1 }\n"
      "}\n"
      "data = here . '/" + std::string(kGnuplotDataName) + "'\n"
      "pps_data = here . '/" + std::string(kGnuplotPpsDataName) + "'\n"
      "fio_data = here . '/" + std::string(kGnuplotFioDataName) + "'\n"
      "set terminal pngcairo noenhanced size 1280," + std::to_string(panels * 480) + " font 'sans,10'\n"
      "set output here . '/" + std::string(kGnuplotImageName) + "'\n"
      "set multiplot layout " + std::to_string(panels) + ",1 title " + quoted(title) + "\n"
      "set datafile missing '-'\n"
      "set grid ytics\n"
      "set key outside right top\n"
      "set style fill solid 0.8 border -1\n"
      "set yrange [0:*]\n"
      "set offsets 0, 0, graph 0.08, 0  # headroom above the tallest bar\n"
      "set style data histogram\n"
      "set style histogram errorbars gap 2 lw 1\n"
      "# Panel: throughput.\n"
      "set title " + quoted("iperf3 throughput: median of " + runs_per_bar(iperf) + ", error bars from min to max") + "\n"
      "set xlabel 'g2h: guest to host, h2g: host to guest, a2b/b2a: guest to guest; Nx: N parallel iperf3 streams; then the MTU in bytes'\n"
      "set ylabel 'Gbit/s'\n"
      "set xtics rotate by 25 right  # a full matrix has 12+ cells: upright labels collide\n";
  out += gbps_configs.empty() ? no_data("no iperf runs in the raw data") : plot("data", iperf, gbps_configs);
  out += "set xtics norotate center\n";
  if (!pps_configs.empty())
    out += "# Panel: packet rate.\n"
           "set title " + quoted("UDP packet rate (udp_pps at full rate): median of " + runs_per_bar(pps) +
                                 ", error bars from min to max") + "\n"
           "set xlabel 'g2h: guest to host, h2g: host to guest, a2b/b2a: guest to guest; then the UDP payload in bytes'\n"
           "set ylabel 'datagrams received per s'\n" +
           plot("pps_data", pps, pps_configs);
  if (!fio_configs.empty()) {
    const bool over_host = fio_over_host(fio);
    out += "# Panel: disk.\n"
           "set title " + quoted(std::string("fio in the guest on its virtio-blk disk or shared folder: IO/s") +
                                 (over_host ? " as a fraction of fio on the host's backing file" : " (no host run)") +
                                 ", median of " + runs_per_bar(fio) + ", error bars from min to max") + "\n"
           "set xlabel 'rw, block size, iodepth'\n"
           "set ylabel " + quoted(over_host ? "guest IO/s / host IO/s" : "guest IO/s") + "\n"
           "set xtics rotate by 25 right\n" +
           plot("fio_data", fio, fio_configs) + "set xtics norotate center\n";
  }
  if (!disk.empty())
    // Three boxes per cluster, each 1/(3 + gap) wide: centres at x - 0.2,
    // x, x + 0.2. Greys, as the network's counters below.
    out += "# Panel: what a disk request costs, per config.\n"
           "set title 'Disk: per million requests, over all fio runs of each config (vCPU exits to kvmmio; "
           "kvmmio wake-ups; interrupts the guest took)'\n"
           "set xlabel 'disk config'\n"
           "set ylabel 'count per million requests'\n"
           "set style histogram clustered gap 2\n"
           "plot fio_data index 1 using 2:xtic(1) title 'vCPU exits/Mreq' lc rgb '#404040', \\\n"
           "     '' index 1 using 3 title 'VMM wake-ups/Mreq' lc rgb '#808080', \\\n"
           "     '' index 1 using 4 title 'guest irqs/Mreq' lc rgb '#c0c0c0', \\\n"
           "     '' index 1 using ($0 - 0.2):2:(sprintf('%.0f', $2)) with labels offset 0,0.7 notitle, \\\n"
           "     '' index 1 using ($0):3:(sprintf('%.0f', $3)) with labels offset 0,0.7 notitle, \\\n"
           "     '' index 1 using ($0 + 0.2):4:(sprintf('%.0f', $4)) with labels offset 0,0.7 notitle\n";
  if (!vsock_configs.empty()) {
    // The last block of throughput.dat. gnuplot numbers only the blocks
    // that hold data: the iperf groups (when there are iperf cells), the
    // modes' counters and the outside exits (when any) come before it.
    const int index = !iperf.empty() + !modes.empty() + !outside.empty();
    out += "# Panel: vsock.\n"
           "set title " + quoted("vsock: Gbit/s per direction (AF_VSOCK between host and guest; host: its own "
                                 "loopback), median of " + runs_per_bar(vsock) + ", error bars from min to max") + "\n"
           "set xlabel 'g2h: guest to host, h2g: host to guest'\n"
           "set ylabel 'Gbit/s'\n"
           // Error bars again: the disk's counters panel above, when drawn,
           // left the histograms clustered, which takes one column.
           "set style histogram errorbars gap 2 lw 1\n" +
           plot("data", vsock, vsock_configs, std::to_string(index));
  }
  out +=
      "# Panel: what each mode costs the VMM.\n"
      "set title 'VMM work per GB received, over all iperf3 runs of each mode (vCPU exits to kvmmio; interrupts kvmmio injected or relayed)'\n"
      "set xlabel 'mode'\n"
      "set ylabel 'count per GB'\n"
      "set style histogram clustered gap 2\n";
  if (modes.empty())
    out += no_data("no VMM counters in the raw data (host or peer VMM runs only)");
  else
    // Two boxes per cluster, each 1/(2 + gap) wide: centres at x -/+ 0.125.
    // Greys, so these bars are not read as the modes' colours above.
    out += "plot data index 1 using 2:xtic(1) title 'vCPU exits/GB' lc rgb '#404040', \\\n"
           "     '' index 1 using 3 title 'VMM interrupts/GB' lc rgb '#b0b0b0', \\\n"
           "     '' index 1 using ($0 - 0.125):2:(sprintf('%.0f', $2)) with labels offset 0,0.7 notitle, \\\n"
           "     '' index 1 using ($0 + 0.125):3:(sprintf('%.0f', $3)) with labels offset 0,0.7 notitle\n";
  if (!outside.empty()) {
    // gnuplot numbers only the blocks that hold data: without counters the
    // outside block is index 1.
    const std::string index = modes.empty() ? "1" : "2";
    out += "# Panel: KVM exits per GB read from outside the VMM, any VMM.\n"
           "set title 'KVM exits per GB (outside): KVM debugfs exits per GB received, over the iperf3 runs of each "
           "config where readable'\n"
           "set xlabel 'config'\n"
           "set ylabel 'KVM exits per GB'\n"
           "plot data index " + index + " using 2:xtic(1) title 'KVM exits/GB' lc rgb '#707070', \\\n"
           "     '' index " + index + " using 0:2:(sprintf('%.0f', $2)) with labels offset 0,0.7 notitle\n";
  }
  return out + "unset multiplot\n";
}

}  // namespace

GnuplotFiles render_gnuplot(const Report& report, const std::string& title) {
  const std::vector<Cell> iperf = report.of_kind("iperf"), pps = report.of_kind("pps");
  std::vector<Cell> fio;  // the guests' cells: the host's bars would all be 1
  for (const Cell& c : report.of_kind("fio"))
    if (c.config != kHostConfig) fio.push_back(c);
  const std::vector<std::string> gbps_configs = bar_configs(report, iperf);
  const std::vector<std::string> pps_configs = bar_configs(report, pps);
  const std::vector<std::string> fio_configs = bar_configs(report, fio);
  const std::vector<ModeCounters> modes = mode_counters(iperf, gbps_configs);
  const std::vector<OutsideExits> outside = outside_exits(iperf, gbps_configs);
  const std::vector<DiskCounters> disk = disk_counters(fio, fio_configs);
  const std::string disk_block = disk.empty() ? "" : "\n\n" + disk_counters_block(disk);
  // vsock gets a panel only when a guest config ran it: the host's
  // loopback alone compares nothing. Its bars are then every config's,
  // the host's as the baseline; without it, the chart is as it was.
  const std::vector<Cell> vsock = report.of_kind("vsock");
  const bool vsock_guests =
      std::any_of(vsock.begin(), vsock.end(), [](const Cell& c) { return c.config != kHostConfig; });
  const std::vector<std::string> vsock_configs = vsock_guests ? bar_configs(report, vsock) : std::vector<std::string>();
  // Two blank lines end a gnuplot data block: the counters are `index 1`,
  // the outside exits and the vsock groups (when any) the next blocks with
  // data.
  return {script(iperf, pps, fio, vsock, gbps_configs, pps_configs, fio_configs, vsock_configs, modes, outside, disk,
                 title),
          data("throughput Gbit/s", iperf, gbps_configs) + "\n\n" + counters_block(modes) +
              (outside.empty() ? "" : "\n\n" + outside_block(outside)) +
              (vsock_configs.empty() ? "" : "\n\n" + data("vsock Gbit/s", vsock, vsock_configs)),
          data("packet rate, datagrams/s", pps, pps_configs),
          (fio_over_host(fio) ? data("disk IO/s over the host's", fio, fio_configs, true)
                              : data("disk IO/s", fio, fio_configs)) +
              disk_block};
}

}  // namespace kvmmio::report
