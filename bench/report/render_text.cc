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

std::string num(const std::optional<unsigned>& v) { return v ? std::to_string(*v) : "-"; }

// `row` with a cell's counter columns added: exits, wake-ups, VMM irqs,
// guest irqs.
std::vector<std::string> with_counters(std::vector<std::string> row, const Cell& c) {
  for (const char* name : {"vcpu_exits", "wakeups", "vmm_irqs", "guest_irqs"}) row.push_back(count(c.rate(name)));
  return row;
}

// One row per cell, a blank line between cells of different parameters.
template <class Row>
void add_rows(TextTable& t, const std::vector<Cell>& cells, Row row) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i && !(cells[i - 1].params == cells[i].params)) t.gap();
    t.row(row(cells[i]));
  }
}

std::string throughput(const std::vector<Cell>& cells) {
  TextTable t({L, R, L, R, R, R, R, R, R, R, R, R, R});
  t.header({"", "", "", "", "Gbit/s", "spread", "", "x", "x user-", "exits", "wake-ups", "VMM irqs", "guest irqs"});
  t.header({"config", "MTU", "dir", "streams", "median", "%", "n", "host", "trap", "/GB", "/GB", "/GB", "/GB"});
  add_rows(t, cells, [](const Cell& c) {
    return with_counters({c.config, num(c.params.mtu), c.params.dir.value_or("-"), num(c.params.streams),
                          fixed(c.median("bps", 1e9), 2), fixed(c.range("bps").spread_pct, 1),
                          runs(c.runs_ok, c.runs_failed), fixed(c.ratio_to_host, 2), fixed(c.ratio_to_user_trap, 2)},
                         c);
  });
  return "Throughput: iperf3, receiver Gbit/s, median over completed runs (n; +Nf = N failed)\n"
         "spread = (max - min) / median; x host, x user-trap = median / that config's median for the same\n"
         "MTU, dir and streams; /GB = VMM counter per 1e9 bytes received; VMM irqs = injected + relayed\n\n" +
         t.render();
}

std::string latency(const std::vector<Cell>& cells) {
  TextTable t({L, R, R, R, R, R, R, R});
  t.header({"", "", "trans/s", "p50", "p90", "p99", "", "p50 x"});
  t.header({"config", "MTU", "median", "us", "us", "us", "n", "host"});
  add_rows(t, cells, [](const Cell& c) -> std::vector<std::string> {
    return {c.config, num(c.params.mtu), fixed(c.median("tps"), 0), fixed(c.median("p50_us"), 1),
            fixed(c.median("p90_us"), 1), fixed(c.median("p99_us"), 1), runs(c.runs_ok, c.runs_failed),
            fixed(c.ratio_to_host, 2)};
  });
  return "Latency: tcp_rr, 1-byte request and response on one TCP connection, medians over completed runs\n\n" +
         t.render();
}

std::string packet_rate(const std::vector<Cell>& cells) {
  TextTable t({L, R, R, L, R, R, R, R, R, R, R, R, R});
  t.header({"", "", "", "", "pkt/s", "spread", "loss", "", "x", "exits", "wake-ups", "VMM irqs", "guest irqs"});
  t.header({"config", "MTU", "payload", "dir", "median", "%", "%", "n", "host", "/Mpkt", "/Mpkt", "/Mpkt", "/Mpkt"});
  add_rows(t, cells, [](const Cell& c) {
    return with_counters({c.config, num(c.params.mtu), num(c.params.payload), c.params.dir.value_or("-"),
                          fixed(c.median("pps"), 0), fixed(c.range("pps").spread_pct, 1),
                          fixed(c.median("loss_pct"), 1), runs(c.runs_ok, c.runs_failed), fixed(c.ratio_to_host, 2)},
                         c);
  });
  return "Packet rate: udp_pps at full rate, UDP datagrams received per second, median over completed runs\n"
         "loss = lost / sent, median over runs; x host = median / host median for the same MTU, payload and\n"
         "dir; /Mpkt = VMM counter per 1e6 datagrams received; VMM irqs = injected + relayed\n\n" +
         t.render();
}

std::string disk(const std::vector<Cell>& cells) {
  TextTable t({L, L, R, R, R, R, R, R, R, R, R, R, R, R, R, R});
  t.header({"", "", "", "", "MB/s", "IO/s", "spread", "", "x", "exits", "wake-ups", "VMM irqs", "guest irqs", "exits",
            "wake-ups", "guest irqs"});
  t.header({"config", "rw", "bs", "depth", "median", "median", "%", "n", "host", "/Mreq", "/Mreq", "/Mreq", "/Mreq",
            "/GB", "/GB", "/GB"});
  add_rows(t, cells, [](const Cell& c) {
    std::vector<std::string> row = {c.config,
                                    c.params.rw.value_or("-"),
                                    c.params.bs ? (*c.params.bs % 1024 ? std::to_string(*c.params.bs)
                                                                       : *c.params.bs % (1024 * 1024)
                                                                           ? std::to_string(*c.params.bs / 1024) + "k"
                                                                           : std::to_string(*c.params.bs >> 20) + "M")
                                                : "-",
                                    num(c.params.depth),
                                    fixed(c.median("bw_bps", 1e6), 1),
                                    fixed(c.median("iops"), 0),
                                    fixed(c.range("iops").spread_pct, 1),
                                    runs(c.runs_ok, c.runs_failed),
                                    fixed(c.ratio_to_host, 3)};
    row = with_counters(row, c);
    for (const char* name : {"vcpu_exits", "wakeups", "guest_irqs"}) row.push_back(count(c.rate2(name)));
    return row;
  });
  return "Disk: fio, guest on its virtio-blk disk (O_DIRECT, libaio) versus host on the backing file\n"
         "(buffered), medians over completed runs; MB/s = 1e6 bytes/s; x host = IO/s median / host's for the\n"
         "same rw, bs and depth; /Mreq = VMM counter per 1e6 requests, /GB per 1e9 bytes; VMM irqs =\n"
         "injected + relayed; blk-ENGINE-REGS: kvmmio's I/O engine and register access\n\n" +
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
  for (const Run& f : r.failures) {
    out += "  " + f.kind + " config=" + f.config;
    if (f.params.mtu) out += " mtu=" + std::to_string(*f.params.mtu);
    if (f.params.payload) out += " payload=" + std::to_string(*f.params.payload);
    if (f.params.dir) out += " dir=" + *f.params.dir;
    if (f.params.streams) out += " streams=" + std::to_string(*f.params.streams);
    if (f.params.rw) out += " rw=" + *f.params.rw;
    if (f.params.bs) out += " bs=" + std::to_string(*f.params.bs);
    if (f.params.depth) out += " depth=" + std::to_string(*f.params.depth);
    if (f.rep) out += " rep=" + std::to_string(f.rep);
    out += ": " + *f.failed + " (" + f.source.str() + ")\n";
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
  using Table = std::string (*)(const std::vector<Cell>&);
  for (const auto& [kind, table] : {std::pair<const char*, Table>{"iperf", throughput}, {"rr", latency},
                                    {"pps", packet_rate}, {"fio", disk}}) {
    const std::vector<Cell> cells = report.of_kind(kind);
    if (!cells.empty()) out += "\n" + table(cells);
  }
  if (!report.micro.empty()) out += "\n" + micro(report);
  if (!report.failures.empty()) out += "\n" + failures(report);
  return out;
}

}  // namespace kvmmio::report
