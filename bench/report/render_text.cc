// SPDX-License-Identifier: BSD-2-Clause
// render_text: one function per table. "-" stands for an absent value.
#include "bench/report/render_text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "bench/report/claims.h"
#include "bench/report/kinds.h"
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

// fio's block size: bytes, or whole KiB or MiB.
std::string block_size(const std::optional<unsigned>& bs) {
  if (!bs) return "-";
  if (*bs % 1024) return std::to_string(*bs);
  if (*bs % (1024 * 1024)) return std::to_string(*bs / 1024) + "k";
  return std::to_string(*bs >> 20) + "M";
}

// Whether any cell has a ratio to the peer VMM (a qemu-pci cell of the same
// key exists): only then do the tables get its column.
bool any_peer(const std::vector<Cell>& cells) {
  return std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.ratio_to_peer.has_value(); });
}


// `row` with a cell's counter columns added: exits, wake-ups, VMM irqs,
// guest irqs.
std::vector<std::string> with_counters(std::vector<std::string> row, const Cell& c) {
  for (const char* name : {"vcpu_exits", "wakeups", "vmm_irqs", "guest_irqs"}) row.push_back(count(c.rate(name)));
  return row;
}

// A network table: its own columns (`align`, two header lines), then x
// qemu-pci when `peer`, then the four counter columns per `unit`.
TextTable net_table(bool peer, std::vector<Align> align, std::vector<std::string> head1,
                    std::vector<std::string> head2, const char* unit) {
  if (peer) {
    align.push_back(R);
    head1.push_back("x qemu-");
    head2.push_back("pci");
  }
  for (const char* name : {"exits", "wake-ups", "VMM irqs", "guest irqs"}) {
    align.push_back(R);
    head1.push_back(name);
    head2.push_back(unit);
  }
  TextTable t(std::move(align));
  t.header(std::move(head1));
  t.header(std::move(head2));
  return t;
}

// A cell's row of net_table: `row`, then its ratio to qemu-pci and its
// counters.
std::vector<std::string> net_row(bool peer, std::vector<std::string> row, const Cell& c) {
  if (peer) row.push_back(fixed(c.ratio_to_peer, 2));
  return with_counters(std::move(row), c);
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
  const bool peer = any_peer(cells);
  TextTable t = net_table(peer, {L, R, L, R, R, R, R, R, R}, {"", "", "", "", "Gbit/s", "spread", "", "x", "x user-"},
                          {"config", "MTU", "dir", "streams", "median", "%", "n", "host", "trap"}, "/GB");
  add_rows(t, cells, [&](const Cell& c) {
    return net_row(peer,
                   {c.config, num(c.params.mtu), c.params.dir.value_or("-"), num(c.params.streams),
                    fixed(c.median("bps", 1e9), 2), fixed(c.range("bps").spread_pct, 1), runs(c.runs_ok, c.runs_failed),
                    fixed(c.ratio_to_host, 2), fixed(c.ratio_to_user_trap, 2)},
                   c);
  });
  return std::string("Throughput: iperf3, receiver Gbit/s, median over completed runs (n; +Nf = N failed)\n") +
         (peer ? "spread = (max - min) / median; x host, x user-trap, x qemu-pci = median / that config's median\n"
                 "for the same MTU, dir and streams (qemu-pci: the peer VMM); /GB = VMM counter per 1e9 bytes\n"
                 "received; VMM irqs = injected + relayed\n\n"
               : "spread = (max - min) / median; x host, x user-trap = median / that config's median for the same\n"
                 "MTU, dir and streams; /GB = VMM counter per 1e9 bytes received; VMM irqs = injected + relayed\n\n") +
         t.render();
}

std::string latency(const std::vector<Cell>& cells) {
  const bool peer = any_peer(cells);
  std::vector<Align> align{L, R, R, R, R, R, R, R};
  std::vector<std::string> head1{"", "", "trans/s", "p50", "p90", "p99", "", "p50 x"};
  std::vector<std::string> head2{"config", "MTU", "median", "us", "us", "us", "n", "host"};
  if (peer) {
    align.insert(align.end(), {R, R});
    head1.insert(head1.end(), {"p50 x", "p99 x"});
    head2.insert(head2.end(), {"qemu-pci", "qemu-pci"});
  }
  TextTable t(align);
  t.header(head1);
  t.header(head2);
  add_rows(t, cells, [&](const Cell& c) {
    std::vector<std::string> row{c.config, num(c.params.mtu), fixed(c.median("tps"), 0), fixed(c.median("p50_us"), 1),
                                 fixed(c.median("p90_us"), 1), fixed(c.median("p99_us"), 1),
                                 runs(c.runs_ok, c.runs_failed), fixed(c.ratio_to_host, 2)};
    if (peer) row.insert(row.end(), {fixed(c.ratio_to_peer, 2), fixed(c.p99_ratio_to_peer, 2)});
    return row;
  });
  return std::string("Latency: tcp_rr, 1-byte request and response on one TCP connection, medians over completed runs\n") +
         (peer ? "p50 x host = p50 / host's p50 at the same MTU; p50 x, p99 x qemu-pci = that percentile / qemu-pci's\n"
                 "(the peer VMM)\n"
               : "") +
         "\n" + t.render();
}

std::string packet_rate(const std::vector<Cell>& cells) {
  const bool peer = any_peer(cells);
  TextTable t = net_table(peer, {L, R, R, L, R, R, R, R, R}, {"", "", "", "", "pkt/s", "spread", "loss", "", "x"},
                          {"config", "MTU", "payload", "dir", "median", "%", "%", "n", "host"}, "/Mpkt");
  add_rows(t, cells, [&](const Cell& c) {
    return net_row(peer,
                   {c.config, num(c.params.mtu), num(c.params.payload), c.params.dir.value_or("-"),
                    fixed(c.median("pps"), 0), fixed(c.range("pps").spread_pct, 1), fixed(c.median("loss_pct"), 1),
                    runs(c.runs_ok, c.runs_failed), fixed(c.ratio_to_host, 2)},
                   c);
  });
  return std::string(
             "Packet rate: udp_pps at full rate, UDP datagrams received per second, median over completed runs\n"
             "loss = lost / sent, median over runs; x host = median / host median for the same MTU, payload and\n") +
         (peer ? "dir (x qemu-pci likewise: the peer VMM); /Mpkt = VMM counter per 1e6 datagrams received; VMM irqs =\n"
                 "injected + relayed\n\n"
               : "dir; /Mpkt = VMM counter per 1e6 datagrams received; VMM irqs = injected + relayed\n\n") +
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
                                    block_size(c.params.bs),
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
  return "Disk: fio, guest on its virtio-blk disk or a file in its virtio-fs shared folder (O_DIRECT, libaio)\n"
         "versus host on the backing file (buffered), medians over completed runs; MB/s = 1e6 bytes/s;\n"
         "x host = IO/s median / host's for the same rw, bs and depth; /Mreq = VMM counter per 1e6\n"
         "requests, /GB per 1e9 bytes; VMM irqs = injected + relayed; blk-ENGINE-REGS: kvmmio's I/O engine\n"
         "and register access; fs-mirror: the shared folder served by virtiofsd, registers from the mirror\n\n" +
         t.render();
}

// Like throughput's table, keyed by direction alone, with the host's vsock
// loopback as its only baseline (the JSON has no other ratio for vsock).
std::string vsock(const std::vector<Cell>& cells) {
  TextTable t = net_table(false, {L, L, R, R, R, R}, {"", "", "Gbit/s", "spread", "", "x"},
                          {"config", "dir", "median", "%", "n", "host"}, "/GB");
  add_rows(t, cells, [](const Cell& c) {
    return net_row(false,
                   {c.config, c.params.dir.value_or("-"), fixed(c.median("bps", 1e9), 2),
                    fixed(c.range("bps").spread_pct, 1), runs(c.runs_ok, c.runs_failed), fixed(c.ratio_to_host, 2)},
                   c);
  });
  return "vsock: host <-> guest over AF_VSOCK, receiver Gbit/s, median over completed runs (n; +Nf = N failed)\n"
         "spread = (max - min) / median; x host = median / host's median (AF_VSOCK loopback on the host)\n"
         "for the same dir; /GB = VMM counter per 1e9 bytes received; VMM irqs = injected + relayed\n\n" +
         t.render();
}

// The outside counters of one kind's cells that have them: the cell's key,
// then the seven rates ("-": unreadable in some run) and the VMM's CPU as
// a percentage of one core.
std::string outside_table(const std::string& kind, const std::vector<Cell>& cells) {
  std::vector<std::string> key;
  if (kind == "iperf") key = {"MTU", "dir", "streams"};
  if (kind == "pps") key = {"MTU", "payload", "dir"};
  if (kind == "fio") key = {"rw", "bs", "depth"};
  if (kind == "vsock") key = {"dir"};
  std::vector<Align> align{L};
  std::vector<std::string> head1{""}, head2{"config"};
  for (const std::string& k : key) {
    align.push_back(k == "dir" || k == "rw" ? L : R);
    head1.push_back("");
    head2.push_back(k);
  }
  // kOutsideNames' columns, then the % of one core.
  for (const auto& [top, bottom] : {std::pair{"KVM", "exits"}, {"MMIO exits", "to user"}, {"MMIO exits", "in kernel"},
                                    {"halt", "wake-ups"}, {"VMM ctxt", "switches"}, {"VMM CPU", "ms"},
                                    {"guest", "irqs"}, {"VMM CPU", "% core"}}) {
    align.push_back(R);
    head1.push_back(top);
    head2.push_back(bottom);
  }
  TextTable t(align);
  t.header(head1);
  t.header(head2);
  std::vector<Cell> with;
  for (const Cell& c : cells)
    if (c.outside_rates) with.push_back(c);
  add_rows(t, with, [&](const Cell& c) {
    const Params& p = c.params;
    std::vector<std::string> row{c.config};
    if (kind == "iperf") row.insert(row.end(), {num(p.mtu), p.dir.value_or("-"), num(p.streams)});
    if (kind == "pps") row.insert(row.end(), {num(p.mtu), num(p.payload), p.dir.value_or("-")});
    if (kind == "fio") row.insert(row.end(), {p.rw.value_or("-"), block_size(p.bs), num(p.depth)});
    if (kind == "vsock") row.push_back(p.dir.value_or("-"));
    for (const char* name : kOutsideNames) row.push_back(count(c.outside_rate(name)));
    row.push_back(fixed(c.vmm_cpu_core_pct, 1));
    return row;
  });
  return t.render();
}

std::string outside(const Report& r) {
  std::string out =
      "Counters read from outside the VMM: deltas over each run, summed over completed runs, per unit of\n"
      "work; any VMM. KVM exits, MMIO exits to user space and handled in the kernel, halt wake-ups: KVM's\n"
      "debugfs totals; VMM ctxt switches and VMM CPU ms (user + system time): of the VMM's threads other\n"
      "than vCPUs and vhost workers; guest irqs: virtio interrupts the guest took; VMM CPU % core = that\n"
      "CPU time / the runs' seconds (100: one host core busy). - = unreadable in some run of the cell\n";
  for (const auto& [kind, unit] : {std::pair{"iperf", "iperf3, per GB received"},
                                   {"pps", "udp_pps, per million datagrams received"},
                                   {"fio", "fio, per million requests"},
                                   {"vsock", "vsock, per GB received"}}) {
    const std::vector<Cell> cells = r.of_kind(kind);
    if (std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.outside_rates.has_value(); }))
      out += std::string("\n") + unit + "\n\n" + outside_table(kind, cells);
  }
  return out;
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

// A side of a verdict: its range, lowest..highest.
std::string span(const Side& s, int decimals) { return fixed(s.min, decimals) + ".." + fixed(s.max, decimals); }

std::string verdict_text(const Verdict& x) {
  const std::string why = why_not_clear(x);
  return std::string(x.ahead ? "ahead" : "BEHIND") + ", " + (why.empty() ? "clear" : why);
}

// A claim's table: each verdict with both medians, ranges and run counts,
// their ratio (the mirror's median over the rival's) and the verdict. The
// peer claim has one rival, named in the header; the modes claim names
// each verdict's.
std::string verdicts(const std::vector<Verdict>& v, bool name_rival) {
  std::vector<Align> align{L, R, R, R, R, R, R, R, L};
  std::vector<std::string> head{"cell", "mirror", "range", "n", kPeerConfig, "range", "n", "ratio", "verdict"};
  if (name_rival) {
    align.insert(align.begin() + 4, L);
    head[4] = "its median";
    head.insert(head.begin() + 4, "other mode");
  }
  TextTable t(align);
  t.header(head);
  for (const Verdict& x : v) {
    const int decimals = x.unit == "Gbit/s" ? 2 : x.unit == "us" ? 1 : 0;
    std::vector<std::string> row{
        x.cell,
        fixed(x.mirror.median, decimals) + " " + x.unit,
        span(x.mirror, decimals),
        std::to_string(x.mirror.runs),
        fixed(x.other.median, decimals),
        span(x.other, decimals),
        std::to_string(x.other.runs),
        fixed(x.other.median != 0 ? std::optional<double>(x.mirror.median / x.other.median) : std::nullopt, 2),
        verdict_text(x)};
    if (name_rival) row.insert(row.begin() + 4, x.rival);
    t.row(row);
  }
  return t.render();
}

// The outcome and its counts, then each cell the claim names that a side
// has no median in.
std::string headline(const Claim& c) {
  const Outcome o = c.outcome();
  std::string name = outcome_name(o);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::toupper(ch); });
  std::string out = "  " + name + ": ahead in " + std::to_string(ahead_count(c.verdicts)) + " of " +
                    std::to_string(c.verdicts.size()) + " verdicts; " + std::to_string(clear_count(c.verdicts)) +
                    " of the verdicts clear; " + std::to_string(c.missing.size()) + " missing\n";
  for (const Missing& m : c.missing) {
    std::string without;
    for (const std::string& w : m.without) without += (without.empty() ? "" : ", ") + w;
    out += "  missing: " + m.cell + " against " + m.rival + " (no median: " + without + ")\n";
  }
  return out;
}

std::string claim(const std::string& title, const Claim& c, bool name_rival) {
  return "\n" + title + ":\n" + headline(c) + (c.verdicts.empty() ? "" : "\n" + verdicts(c.verdicts, name_rival));
}

std::string claims(const Claims& c) {
  std::string out =
      "kvmmio's claims in this run (docs/benchmarks.md, \"The claims\"): medians decide ahead or BEHIND;\n"
      "range = lowest..highest of the n completed runs; ratio = the mirror's median / the rival's;\n"
      "\"clear\" when both configs have " +
      std::to_string(kClearRuns) +
      " or more runs and their ranges do not overlap. A claim HOLDS\n"
      "when every cell it names has a verdict against every rival and each is clearly ahead, DOES NOT\n"
      "HOLD when one is clearly BEHIND, and is NOT SHOWN otherwise (a cell missing, or a verdict not clear)\n";
  if (c.peer.judged())
    out += claim(std::string(kMirrorConfig) + " at or ahead of " + kPeerConfig + " in every cell", c.peer, false);
  if (c.modes.judged())
    out += claim(std::string(kMirrorConfig) + " at or ahead of each of kvmmio's other modes at 64 B and in tcp_rr p99",
                 c.modes, true);
  if (c.mirror_wakeups || c.mirror_ctxt_switches)
    out += "\nThe mirror's VMM over its packet-rate runs: " + fixed(c.mirror_wakeups, 0) +
           " wake-ups (kvmmio's counters: vCPU exits to userspace\nand event-loop wake-ups), " +
           fixed(c.mirror_ctxt_switches, 0) + " context switches of its own threads (read from outside)\n";
  return out;
}

// "KIND config=CONFIG" and the parameters it has, as the failure and retry
// lists name a run's cell.
std::string cell_name(const std::string& kind, const std::string& config, const Params& p) {
  std::string out = kind + " config=" + config;
  if (p.mtu) out += " mtu=" + std::to_string(*p.mtu);
  if (p.payload) out += " payload=" + std::to_string(*p.payload);
  if (p.dir) out += " dir=" + *p.dir;
  if (p.streams) out += " streams=" + std::to_string(*p.streams);
  if (p.rw) out += " rw=" + *p.rw;
  if (p.bs) out += " bs=" + std::to_string(*p.bs);
  if (p.depth) out += " depth=" + std::to_string(*p.depth);
  return out;
}

std::string failures(const Report& r) {
  std::string out = "Failed runs (not in the medians)\n\n";
  for (const Run& f : r.failures) {
    out += "  " + cell_name(f.kind, f.config, f.params);
    if (f.rep) out += " rep=" + std::to_string(f.rep);
    out += ": " + *f.failed + " (" + f.source.str() + ")\n";
  }
  return out;
}

// The runs tried more than once, under their cell with how many of its
// runs needed a retry: how the last attempt went (what the cell counts),
// then each earlier attempt's reason, so that a flaky cell shows even when
// every run ended ok.
std::string retried(const Report& r) {
  std::string out = "Retried runs (counted by their last attempt; the earlier, failed attempts are not)\n";
  const auto same_cell = [](const Run& a, const Run& b) {
    return a.kind == b.kind && a.config == b.config && a.params == b.params;
  };
  for (size_t i = 0; i < r.retried.size(); ++i) {
    const Run& run = r.retried[i].run;
    if (i == 0 || !same_cell(r.retried[i - 1].run, run)) {
      const auto cell = std::find_if(r.cells.begin(), r.cells.end(), [&](const Cell& c) {
        return c.kind == run.kind && c.config == run.config && c.params == run.params;
      });
      // A failed run that lacks a parameter is in no cell; its retries
      // are then counted here alone.
      const bool in_cell = cell != r.cells.end();
      const size_t n = in_cell ? cell->retries
                               : std::count_if(r.retried.begin(), r.retried.end(),
                                               [&](const Retried& t) { return same_cell(t.run, run); });
      const size_t of = in_cell ? cell->runs_ok + cell->runs_failed : n;
      out += "\n  " + cell_name(run.kind, run.config, run.params) + ": " + std::to_string(n) +
             (in_cell ? " of " + std::to_string(of) : std::string()) + (of == 1 ? " run" : " runs") + " retried\n";
    }
    out += "    " + (run.rep ? "rep=" + std::to_string(run.rep) : std::string("run")) + ": " +
           (run.failed ? "failed at attempt " + std::to_string(run.attempt) + ": " + *run.failed
                       : "ok at attempt " + std::to_string(run.attempt)) +
           " (" + run.source.str() + ")";
    for (const Run& e : r.retried[i].earlier)
      out += "; attempt " + std::to_string(e.attempt) + " failed: " + *e.failed + " (" + e.source.str() + ")";
    out += "\n";
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
                                    {"pps", packet_rate}, {"fio", disk}, {"vsock", vsock}}) {
    const std::vector<Cell> cells = report.of_kind(kind);
    if (!cells.empty()) out += "\n" + table(cells);
  }
  if (std::any_of(report.cells.begin(), report.cells.end(), [](const Cell& c) { return c.outside_rates.has_value(); }))
    out += "\n" + outside(report);
  if (const Claims c = judge_claims(report); c.peer.judged() || c.modes.judged()) out += "\n" + claims(c);
  if (!report.micro.empty()) out += "\n" + micro(report);
  if (!report.failures.empty()) out += "\n" + failures(report);
  if (!report.retried.empty()) out += "\n" + retried(report);
  return out;
}

}  // namespace kvmmio::report
