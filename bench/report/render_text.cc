// SPDX-License-Identifier: BSD-2-Clause
// render_text: one function per table. "-" stands for an absent value.
#include "bench/report/render_text.h"

#include <algorithm>
#include <cstdio>

#include "bench/report/text_table.h"

namespace kvmmio::report {
namespace {

using Align = TextTable::Align;
constexpr Align L = Align::kLeft;
constexpr Align R = Align::kRight;

std::string fixed(const std::optional<double>& v, int decimals, const char* suffix = "") {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, *v, suffix);
  return buf;
}

// Events per GB range from hundreds of thousands (a trapping VMM) to
// fractions (vhost, where the point is that they are nearly zero): keep the
// digits that matter at each size.
std::string count(const std::optional<double>& v) {
  if (!v) return "-";
  if (*v == 0) return "0";
  return fixed(v, *v >= 100 ? 0 : *v >= 1 ? 1 : 3);
}

std::string runs(unsigned ok, unsigned failed) {
  return failed ? std::to_string(ok) + " +" + std::to_string(failed) + "f" : std::to_string(ok);
}

std::string throughput(const Report& r) {
  TextTable t({L, R, L, R, R, R, R, R, R, R, R, R, R});
  t.header({"", "", "", "", "Gbit/s", "spread", "", "x", "x user-", "exits", "wake-ups", "VMM irqs", "guest irqs"});
  t.header({"config", "MTU", "dir", "streams", "median", "%", "n", "host", "trap", "/GB", "/GB", "/GB", "/GB"});
  const IperfCell* prev = nullptr;
  for (const IperfCell& c : r.iperf) {
    if (prev && (prev->mtu != c.mtu || prev->dir != c.dir || prev->streams != c.streams)) t.gap();
    prev = &c;
    const auto g = [&](double PerGb::*field) -> std::optional<double> {
      if (!c.per_gb) return std::nullopt;
      return (*c.per_gb).*field;
    };
    t.row({c.config, std::to_string(c.mtu), to_string(c.dir), std::to_string(c.streams), fixed(c.median_gbps, 2),
           fixed(c.spread_pct, 1), runs(c.runs_ok, c.runs_failed), fixed(c.ratio_to_host, 2),
           fixed(c.ratio_to_user_trap, 2), count(g(&PerGb::vcpu_exits)), count(g(&PerGb::wakeups)),
           count(g(&PerGb::vmm_irqs)), count(g(&PerGb::guest_irqs))});
  }
  return "Throughput: iperf3, receiver Gbit/s, median over completed runs (n; +Nf = N failed)\n"
         "spread = (max - min) / median; x host, x user-trap = median / that config's median for the same\n"
         "MTU, dir and streams; /GB = VMM counter per 1e9 bytes received; VMM irqs = injected + relayed\n\n" +
         t.render();
}

std::string latency(const Report& r) {
  TextTable t({L, R, R, R, R, R, R, R});
  t.header({"", "", "trans/s", "p50", "p90", "p99", "", "p50 x"});
  t.header({"config", "MTU", "median", "us", "us", "us", "n", "host"});
  const RrCell* prev = nullptr;
  for (const RrCell& c : r.rr) {
    if (prev && prev->mtu != c.mtu) t.gap();
    prev = &c;
    t.row({c.config, std::to_string(c.mtu), fixed(c.median_tps, 0), fixed(c.median_p50_us, 1),
           fixed(c.median_p90_us, 1), fixed(c.median_p99_us, 1), runs(c.runs_ok, c.runs_failed),
           fixed(c.p50_ratio_to_host, 2)});
  }
  return "Latency: tcp_rr, 1-byte request and response on one TCP connection, medians over completed runs\n\n" +
         t.render();
}

// Platforms side by side: one column each, so the ratios line up.
std::string micro(const Report& r) {
  std::vector<Align> align{L};
  std::vector<std::string> head{"us per operation"};
  std::vector<std::string> names;  // every "us" entry, first-seen order
  for (const MicroPlatform& p : r.micro) {
    align.push_back(R);
    head.push_back(p.result.platform);
    for (const auto& [name, us] : p.result.us)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  TextTable t(align);
  t.header(head);
  std::vector<std::string> arch{"arch"};
  for (const MicroPlatform& p : r.micro) arch.push_back(p.result.arch);
  t.row(arch);
  for (const std::string& name : names) {
    std::vector<std::string> row{name};
    for (const MicroPlatform& p : r.micro) {
      std::optional<double> v;
      for (const auto& [n, us] : p.result.us)
        if (n == name) v = us;
      row.push_back(fixed(v, 3));
    }
    t.row(row);
  }
  t.gap();
  std::vector<std::string> exit_ratio{"mmio_exit / ioeventfd"}, relay_ratio{"irq_line_relay / irqfd"};
  for (const MicroPlatform& p : r.micro) {
    exit_ratio.push_back(fixed(p.mmio_exit_per_ioeventfd, 2, "x"));
    relay_ratio.push_back(fixed(p.irq_line_relay_per_irqfd, 2, "x"));
  }
  t.row(exit_ratio);
  t.row(relay_ratio);
  return "KVM-layer microbenchmarks: kvm_notify_bench, median of interleaved runs\n\n" + t.render();
}

std::string failures(const Report& r) {
  std::string out = "Failed runs (not in the medians)\n\n";
  for (const Failure& f : r.failures) {
    out += "  " + f.kind + " config=" + f.config + " mtu=" + std::to_string(f.mtu);
    if (f.dir) out += std::string(" dir=") + to_string(*f.dir);
    if (f.streams) out += " streams=" + std::to_string(*f.streams);
    out += " rep=" + std::to_string(f.rep) + ": " + f.reason + " (" + f.source.str() + ")\n";
  }
  return out;
}

}  // namespace

std::string render_text(const Report& report, const std::string& title) {
  std::string out = title + "\n" + std::string(title.size(), '=') + "\n";
  if (!report.meta.empty()) {
    out += "\n";
    std::string line;
    for (const auto& [k, v] : report.meta) {
      const std::string item = k + "=" + v;
      if (!line.empty() && line.size() + 1 + item.size() > 100) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + item;
    }
    out += line + "\n";
  }
  if (!report.iperf.empty()) out += "\n" + throughput(report);
  if (!report.rr.empty()) out += "\n" + latency(report);
  if (!report.micro.empty()) out += "\n" + micro(report);
  if (!report.failures.empty()) out += "\n" + failures(report);
  return out;
}

}  // namespace kvmmio::report
