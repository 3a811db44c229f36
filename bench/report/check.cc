// SPDX-License-Identifier: BSD-2-Clause
// check_run: the cells first (every one measured), then the outside
// counters the report needs, the runs that shared the host, and with
// CheckLevel::kModes each mode's counters. The lines are the words
// net-compare.sh's shell check printed, which scripts/main.sh's users and
// tests/bench/net-compare-check.test know.
#include "bench/report/check.h"

#include <map>
#include <set>

#include "bench/report/net_modes.h"

namespace kvmmio::report {
namespace {

// --- the cells -------------------------------------------------------------------

// A cell of the matrix: a kind, a config and the parameters its runs are
// measured at (the ones the kind has; the others unset).
struct Cell {
  std::string kind, config;
  Params params;
};

// Whether run parameter `r` agrees with the cell's `w`: a parameter the
// cell does not have agrees; one the run lacks agrees when `absent_agrees`.
template <class T>
bool agrees(const std::optional<T>& w, const std::optional<T>& r, bool absent_agrees) {
  return !w || (r ? *r == *w : absent_agrees);
}
bool params_agree(const Params& w, const Params& r, bool absent_agrees) {
  return agrees(w.mtu, r.mtu, absent_agrees) && agrees(w.payload, r.payload, absent_agrees) &&
         agrees(w.dir, r.dir, absent_agrees) && agrees(w.streams, r.streams, absent_agrees) &&
         agrees(w.rw, r.rw, absent_agrees) && agrees(w.bs, r.bs, absent_agrees) &&
         agrees(w.depth, r.depth, absent_agrees);
}

// A record of cell `w` (whatever its outcome): every parameter of the cell
// given, and the same.
bool of(const Cell& w, const Run& r) {
  return r.kind == w.kind && r.config == w.config && params_agree(w.params, r.params, false);
}

// A failed record that says something about cell `w`: one without a
// repeat is its whole config's failure (the guest did not boot: one record
// for every cell of it, whatever the kind); one with a repeat is about the
// cells its parameters match, those it lacks (it stopped before them)
// matching any.
bool touches(const Cell& w, const Run& r) {
  if (r.rep == 0) return r.config == w.config;
  return r.kind == w.kind && r.config == w.config && params_agree(w.params, r.params, true);
}

std::string name(const Cell& w) {
  const Params& p = w.params;
  const auto num = [](const std::optional<unsigned>& x) { return x ? std::to_string(*x) : std::string("null"); };
  const auto str = [](const std::optional<std::string>& x) { return x ? *x : std::string("null"); };
  if (w.kind == "iperf")
    return "iperf3 " + w.config + " " + str(p.dir) + " " + num(p.streams) + "x MTU " + num(p.mtu);
  if (w.kind == "rr") return "tcp_rr " + w.config + " MTU " + num(p.mtu);
  if (w.kind == "pps")
    return "udp_pps " + w.config + " " + str(p.dir) + " " + num(p.payload) + "-byte payloads MTU " + num(p.mtu);
  if (w.kind == "vsock") return "vsock_stream " + w.config + " " + str(p.dir);
  return "fio " + w.config + " " + str(p.rw) + " " + num(p.bs) + " B depth " + num(p.depth);
}

// A network config's cells, as measure() runs them: iperf3 at each MTU,
// direction and stream count; at the first MTU tcp_rr, and udp_pps at each
// payload and direction.
void net_cells(const std::string& config, const std::vector<unsigned>& mtus, const std::vector<std::string>& dirs,
               const CheckMatrix& m, std::vector<Cell>& out) {
  const std::optional<unsigned> m1 = m.mtus.empty() ? std::nullopt : std::optional<unsigned>(m.mtus.front());
  for (unsigned mtu : mtus)
    for (const std::string& d : dirs)
      for (unsigned s : m.streams) {
        Cell c{"iperf", config, {}};
        c.params.mtu = mtu, c.params.dir = d, c.params.streams = s;
        out.push_back(c);
      }
  Cell rr{"rr", config, {}};
  rr.params.mtu = m1;
  out.push_back(rr);
  for (unsigned p : m.payloads)
    for (const std::string& d : dirs) {
      Cell c{"pps", config, {}};
      c.params.mtu = m1, c.params.payload = p, c.params.dir = d;
      out.push_back(c);
    }
}

// Every cell of the matrix, in the order the driver runs them: the network
// configs', guest to guest (at the first MTU, both ways), the disk's (each
// fio job at each depth), vsock's.
std::vector<Cell> cells(const CheckMatrix& m) {
  std::vector<Cell> out;
  for (const std::string& c : m.configs) net_cells(c, m.mtus, m.dirs, m, out);
  std::vector<unsigned> first_mtu;
  if (!m.mtus.empty()) first_mtu.push_back(m.mtus.front());
  for (const std::string& g : m.g2g_modes) net_cells("g2g-" + g, first_mtu, {"a2b", "b2a"}, m, out);
  for (const std::string& c : m.fio_configs)
    for (const CheckMatrix::FioJob& j : m.fio_jobs)
      for (unsigned q : m.fio_depths) {
        Cell w{"fio", c, {}};
        w.params.rw = j.rw, w.params.bs = j.bs, w.params.depth = q;
        out.push_back(w);
      }
  for (const std::string& c : m.vsock_configs)
    for (const std::string& d : m.dirs) {
      Cell w{"vsock", c, {}};
      w.params.dir = d;
      out.push_back(w);
    }
  return out;
}

// A cell without a run that succeeded, named with what its attempts said.
void check_cells(const CheckRecords& records, const CheckMatrix& m, std::vector<std::string>& fail) {
  for (const Cell& w : cells(m)) {
    unsigned tried = 0;
    std::set<std::string> reasons;  // sorted and once each, as jq's unique
    bool ok = false;
    for (const Run& r : records.runs) {
      if (!r.failed && of(w, r)) ok = true;
      if (r.failed && touches(w, r)) ++tried, reasons.insert(*r.failed);
    }
    if (ok) continue;
    std::string why;
    if (tried == 0) {
      why = "no record of it: the driver stopped before it; see its output and the guests' consoles";
    } else {
      why = std::to_string(tried) + (tried > 1 ? " attempts" : " attempt") + " failed: ";
      for (auto it = reasons.begin(); it != reasons.end(); ++it) why += (it == reasons.begin() ? "" : ", ") + *it;
    }
    fail.push_back("no successful run: " + name(w) + " (" + why + ")");
  }
}

// --- counters over a config's runs ----------------------------------------------

enum class Member { kCounters, kOutside };

// A counter of a run's `member`: its value, or nothing when the run does
// not have the member (`present` false) or the counter is null or absent.
std::optional<double> counter(const Run& r, Member member, const std::string& name, bool& present) {
  if (member == Member::kCounters) {
    present = r.counters.has_value();
    if (!present) return std::nullopt;
    const auto it = r.counters->find(name);
    return it == r.counters->end() ? std::nullopt : std::optional<double>(it->second);
  }
  present = r.outside.has_value();
  if (!present) return std::nullopt;
  const auto it = r.outside->find(name);
  return it == r.outside->end() ? std::nullopt : it->second;
}

bool completed(const Run& r, const std::string& kind, const std::string& config) {
  return r.kind == kind && r.config == config && !r.failed;
}

// Over a config's completed runs of a kind: how many, how many lack the
// member, and for each name the sum where readable and the runs where it
// is null.
struct Tally {
  unsigned runs = 0, without = 0;
  struct Sum {
    double sum = 0;
    unsigned nulls = 0;
  };
  std::map<std::string, Sum> by_name;
  const Sum& operator[](const std::string& n) const { return by_name.at(n); }
  std::string sum(const std::string& n) const { return format_number(by_name.at(n).sum); }
  std::string nulls(const std::string& n) const { return std::to_string(by_name.at(n).nulls); }
};

Tally tally(const CheckRecords& records, const std::string& kind, const std::string& config, Member member,
            const std::vector<std::string>& names) {
  Tally t;
  for (const std::string& n : names) t.by_name[n];
  for (const Run& r : records.runs) {
    if (!completed(r, kind, config)) continue;
    ++t.runs;
    bool present = false;
    for (const std::string& n : names) {
      const std::optional<double> v = counter(r, member, n, present);
      if (!present) break;
      if (v)
        t.by_name[n].sum += *v;
      else
        ++t.by_name[n].nulls;
    }
    if (!present) ++t.without;
  }
  return t;
}

// How many of a config's completed runs of a kind have value `name` above 0.
unsigned runs_with(const CheckRecords& records, const std::string& kind, const std::string& config,
                   const char* name, const std::optional<std::string>& dir = std::nullopt) {
  unsigned n = 0;
  for (const Run& r : records.runs) {
    if (!completed(r, kind, config) || (dir && r.params.dir != dir)) continue;
    const auto it = r.values.find(name);
    if (it != r.values.end() && it->second > 0) ++n;
  }
  return n;
}

// Where an outside counter is read, so that a null names what to fix.
std::string why_null(const std::string& name) {
  if (name.starts_with("kvm_")) return "KVM's debugfs: mount debugfs on /sys/kernel/debug, on a kernel with KVM's stats";
  if (name.starts_with("vmm_"))
    return "read from /proc/PID: the VMM's process, or a thread of it, went away during the run";
  return "the guest's irqs CGI (its serve hook) answered no number";
}

bool is_peer(const std::string& config) { return config.starts_with("qemu-"); }

bool contains(const std::vector<std::string>& list, const std::string& x) {
  for (const std::string& y : list)
    if (y == x) return true;
  return false;
}

// The outside counters the report reads (its per-GB, per-million-packet
// and per-million-request figures, the VMM's share of a core): readable in
// every completed run of each guest cell, or the report has no figure for
// them. Guest to guest has none (two VMMs). vmm_ctxt_switches of a disk
// cell may go down (io_uring retires idle workers): not required.
void check_outside(const CheckRecords& records, const CheckMatrix& m, std::vector<std::string>& fail) {
  std::vector<std::string> all = m.configs;
  all.insert(all.end(), m.fio_configs.begin(), m.fio_configs.end());
  all.insert(all.end(), m.vsock_configs.begin(), m.vsock_configs.end());
  for (const std::string& c : all) {
    if (c == "host") continue;
    std::vector<std::string> kinds = {"iperf", "pps"};
    if (contains(m.fio_configs, c) || contains(m.vsock_configs, c)) {
      // blk-ENGINE-REGS and fs-mirror: fio; vsock-mirror: vsock.
      const std::string prefix = c.substr(0, c.find('-'));
      kinds = {prefix == "blk" || prefix == "fs" ? std::string("fio") : prefix};
    }
    for (const std::string& k : kinds) {
      const std::vector<std::string> names =
          k == "fio" ? std::vector<std::string>{"kvm_exits", "vmm_cpu_ms", "guest_irqs"}
                     : std::vector<std::string>{"kvm_exits", "kvm_mmio_exit_user", "vmm_ctxt_switches", "guest_irqs"};
      const Tally t = tally(records, k, c, Member::kOutside, names);
      if (t.runs == 0) continue;  // no run: a cell said so
      if (t.without != 0)
        fail.push_back(c + " " + k + ": " + std::to_string(t.without) + " of " + std::to_string(t.runs) +
                       " runs have no outside counters (bench/outside-counters.sh beside net-compare.sh)");
      for (const std::string& n : names)
        if (t[n].nulls != 0)
          fail.push_back(n + " is unreadable (null) for " + c + " in " + t.nulls(n) + " of " + std::to_string(t.runs) +
                         " " + k + " runs: the report has no figure for it (" + why_null(n) + ")");
    }
  }
}

// A run that shared the host with another VM (net-compare.sh's
// other_vms_check): its timings are not this VMM's alone, so its cell is
// not measured.
void check_other_vms(const CheckRecords& records, std::vector<std::string>& fail) {
  for (const Run& r : records.runs) {
    if (!r.outside) continue;
    const auto it = r.outside->find(kOtherVmExits);
    if (it == r.outside->end() || !it->second) continue;
    const Params& p = r.params;
    std::string what = r.kind + " " + r.config;
    for (const std::optional<std::string>& s : {p.dir, p.rw})
      if (s) what += " " + *s;
    for (const std::optional<unsigned>& n : {p.bs, p.payload, p.streams})
      if (n) what += " " + std::to_string(*n);
    what += " rep";
    if (r.rep != 0) what += " " + std::to_string(r.rep);
    fail.push_back("another VM ran during " + what + " (" + format_number(*it->second) +
                   " exits of other VMs): its timings shared the host; run again with no other VM running");
  }
}

// --- the modes ---------------------------------------------------------------------

class ModesCheck {
 public:
  ModesCheck(const CheckRecords& records, const CheckMatrix& m, CheckOutcome& out)
      : records_(records), m_(m), out_(out) {}

  void run() {
    for (const std::string& c : m_.configs) network(c);
    mirror_against_trapped();
    for (const std::string& mode : m_.g2g_modes) guest_to_guest(mode);
    for (const std::string& c : m_.vsock_configs) vsock(c);
    for (const std::string& c : m_.fio_configs) disk(c);
  }

 private:
  void fail(const std::string& line) { out_.shortfalls.push_back(line); }
  void info(const std::string& line) { out_.info.push_back(line); }
  static std::string n(unsigned x) { return std::to_string(x); }

  // NAME, summed over the config's iperf3 runs, must be above 0 (the
  // readable runs suffice).
  void positive(const std::string& c, const Tally& t, const std::string& name, const std::string& what) {
    if (t[name].sum > 0) return;
    if (t[name].nulls > 0)
      fail(name + " is unreadable (null) for " + c + " in " + t.nulls(name) + " of " + n(t.runs) +
           " iperf3 runs: cannot show " + what + " (" + why_null(name) + ")");
    else
      fail(c + ": " + name + " is 0 over " + n(t.runs) + " iperf3 runs: no " + what);
  }
  // NAME must be 0 in every run: one unreadable run leaves that unshown.
  void zero(const std::string& c, const Tally& t, const std::string& name, const std::string& what) {
    if (t[name].nulls > 0)
      fail(name + " is unreadable (null) for " + c + " in " + t.nulls(name) + " of " + n(t.runs) +
           " iperf3 runs: cannot show 0 " + what + " (" + why_null(name) + ")");
    else if (t[name].sum != 0)
      fail(c + ": " + t.sum(name) + " " + what + " during traffic (" + name + "), not 0 (the register mirror)");
  }

  static ModeCounters mode_counters(const Tally& t) {
    return {ModeCounter::of(t["trapped"].sum), ModeCounter::of(t["polled"].sum), ModeCounter::of(t["injected"].sum),
            ModeCounter::of(t["relayed"].sum), ModeCounter::of(t["guest_irqs"].sum)};
  }

  // From outside every VMM alike (summed over the config's iperf3 runs):
  // KVM counted exits and the guest took interrupts; with the register
  // mirror not one exit to userspace and not one context switch of
  // kvmmio's own threads (the claim, seen from outside the VMM); trapped
  // registers exit to userspace; a VMM that relays or serves the queue
  // switches; QEMU's virtio-mmio relays vhost's interrupts in its main
  // loop (which also shows the count reads QEMU's threads). From kvmmio's
  // own counters: who carried the traffic (net_modes.h).
  void network(const std::string& c) {
    if (runs_with(records_, "pps", c, "received") == 0) fail(c + ": no packet-rate run received a datagram");
    if (c == "host") return;
    const Tally o = tally(records_, "iperf", c, Member::kOutside,
                          {"kvm_exits", "kvm_mmio_exit_user", "vmm_ctxt_switches", "guest_irqs"});
    info(c + ", outside: kvm exits " + o.sum("kvm_exits") + ", to userspace " + o.sum("kvm_mmio_exit_user") +
         ", VMM context switches " + o.sum("vmm_ctxt_switches") + ", guest irqs " + o.sum("guest_irqs") + " over " +
         n(o.runs) + " iperf3 runs (null in " + o.nulls("kvm_exits") + ", " + o.nulls("kvm_mmio_exit_user") + ", " +
         o.nulls("vmm_ctxt_switches") + ", " + o.nulls("guest_irqs") + " of them)");
    // No run, or runs without the counters: the cells' check said so.
    if (o.runs == 0 || o.without != 0) return;
    positive(c, o, "kvm_exits", "KVM exits");
    positive(c, o, "guest_irqs", "guest interrupts");
    if (c == "vhost-irqfd-mirror") {
      zero(c, o, "kvm_mmio_exit_user", "exits to userspace");
      zero(c, o, "vmm_ctxt_switches", "VMM context switches");
    } else if (c == "vhost-irqfd") {
      positive(c, o, "kvm_mmio_exit_user", "exit to userspace with trapped registers");
    } else if (c == "vhost-relay" || c.starts_with("user-") || c == "qemu-mmio") {
      positive(c, o, "vmm_ctxt_switches", "VMM context switch, though the VMM relays");
    }
    if (is_peer(c)) return;  // the peer has no --stats
    const Tally k =
        tally(records_, "iperf", c, Member::kCounters, {"trapped", "polled", "injected", "relayed", "guest_irqs"});
    if (k.without != 0) {
      fail(c + ": " + n(k.without) + " of " + n(k.runs) + " iperf3 runs have no VMM counters (kvmmio --stats)");
      return;
    }
    info(c + ": trapped " + k.sum("trapped") + " polled " + k.sum("polled") + " injected " + k.sum("injected") +
         " relayed " + k.sum("relayed") + " guest irqs " + k.sum("guest_irqs"));
    const std::string misfit = net_mode_misfit(c, mode_counters(k));
    if (!misfit.empty()) fail(misfit);
  }

  // The register mirror: the same traffic as vhost-irqfd with (almost) no
  // vCPU exits left, where vhost-irqfd pays two per guest interrupt (the
  // InterruptStatus read and the ACK). Snapshots interrupt the vCPUs, so
  // not exactly zero: under a tenth of the trapped mode's.
  void mirror_against_trapped() {
    if (!contains(m_.configs, "vhost-irqfd") || !contains(m_.configs, "vhost-irqfd-mirror")) return;
    const Tally t = tally(records_, "iperf", "vhost-irqfd", Member::kCounters, {"vcpu_exits"});
    const Tally mi = tally(records_, "iperf", "vhost-irqfd-mirror", Member::kCounters, {"vcpu_exits"});
    info("vCPU exits during traffic: vhost-irqfd " + t.sum("vcpu_exits") + ", vhost-irqfd-mirror " +
         mi.sum("vcpu_exits"));
    if (t.runs == 0 || mi.runs == 0) return;
    if (t["vcpu_exits"].sum == 0)
      fail("vhost-irqfd: no vCPU exits counted (is the counter read?)");
    else if (mi["vcpu_exits"].sum * 10 >= t["vcpu_exits"].sum)
      fail("vhost-irqfd-mirror: " + mi.sum("vcpu_exits") + " vCPU exits during traffic, not under a tenth of vhost-irqfd's " +
           t.sum("vcpu_exits"));
  }

  // Guest to guest: packets both ways; the counters of both VMMs and
  // guests fit the mode, and with the mirror not one VMM wake-up (vCPU exit
  // or event-loop wake-up) in either VMM.
  void guest_to_guest(const std::string& mode) {
    const std::string c = "g2g-" + mode;
    for (const char* d : {"a2b", "b2a"})
      if (runs_with(records_, "pps", c, "received", d) == 0)
        fail(c + " " + d + ": no packet-rate run received a datagram");
    const Tally k = tally(records_, "iperf", c, Member::kCounters,
                          {"trapped", "polled", "injected", "relayed", "guest_irqs", "wakeups"});
    if (k.runs == 0) return;
    if (k.without != 0) {
      fail(c + ": " + n(k.without) + " of " + n(k.runs) + " iperf3 runs have no VMM counters (kvmmio --stats)");
      return;
    }
    info(c + " (both VMMs): trapped " + k.sum("trapped") + " polled " + k.sum("polled") + " injected " +
         k.sum("injected") + " relayed " + k.sum("relayed") + " guest irqs " + k.sum("guest_irqs") + " wake-ups " +
         k.sum("wakeups"));
    const std::string misfit = net_mode_misfit(mode, mode_counters(k));
    if (!misfit.empty()) fail(c + ": " + misfit);
    if (mode.ends_with("-mirror") && k["wakeups"].sum != 0)
      fail(c + ": " + k.sum("wakeups") + " VMM wake-ups during traffic guest to guest, not 0 (the register mirror)");
  }

  // vsock: bytes arrived; through vhost-vsock with the mirror, the VMM is
  // out of the path: no vCPU exit, no wake-up, nothing trapped, polled,
  // injected or relayed while they move, and seen from outside kvmmio no
  // exit to userspace and not one context switch of its own threads.
  void vsock(const std::string& c) {
    if (runs_with(records_, "vsock", c, "bytes") == 0) fail(c + ": no vsock run moved bytes");
    if (c == "host") return;
    const Tally k = tally(records_, "vsock", c, Member::kCounters,
                          {"vcpu_exits", "wakeups", "trapped", "polled", "injected", "relayed", "guest_irqs"});
    if (k.runs == 0) return;
    if (k.without != 0) {
      fail(c + ": " + n(k.without) + " of " + n(k.runs) + " vsock runs have no VMM counters (kvmmio --stats)");
      return;
    }
    const std::string took = "vCPU exits " + k.sum("vcpu_exits") + ", wake-ups " + k.sum("wakeups") + ", trapped " +
                             k.sum("trapped") + ", polled " + k.sum("polled") + ", injected " + k.sum("injected") +
                             ", relayed " + k.sum("relayed");
    info(c + ": " + took + ", guest irqs " + k.sum("guest_irqs"));
    bool all_zero = true;
    for (const char* name : {"vcpu_exits", "wakeups", "trapped", "polled", "injected", "relayed"})
      all_zero = all_zero && k[name].sum == 0;
    if (!all_zero) fail(c + ": the VMM took part in the vsock transfers (" + took + "), not 0 each");
    if (!(k["guest_irqs"].sum > 0)) fail(c + ": the guest took no virtio interrupt during its vsock transfers");
    const Tally o = tally(records_, "vsock", c, Member::kOutside, {"kvm_mmio_exit_user", "vmm_ctxt_switches"});
    if (o.without != 0) {
      fail(c + ": " + n(o.without) + " of " + n(o.runs) + " vsock runs have no outside counters");
      return;
    }
    info(c + ", outside: exits to userspace " + o.sum("kvm_mmio_exit_user") + ", VMM context switches " +
         o.sum("vmm_ctxt_switches") + " over " + n(o.runs) + " vsock runs (null in " + o.nulls("kvm_mmio_exit_user") +
         ", " + o.nulls("vmm_ctxt_switches") + ")");
    if (o["kvm_mmio_exit_user"].nulls != 0 || o["vmm_ctxt_switches"].nulls != 0)
      fail(c + ": an outside counter is unreadable (null) in some vsock run: cannot show 0 (" +
           why_null("kvm_mmio_exit_user") + ")");
    if (o["kvm_mmio_exit_user"].sum != 0 || o["vmm_ctxt_switches"].sum != 0)
      fail(c + ": " + o.sum("kvm_mmio_exit_user") + " exits to userspace and " + o.sum("vmm_ctxt_switches") +
           " VMM context switches during the vsock transfers, not 0");
  }

  // The disk: each config did requests; on the register mirror a request
  // costs no vCPU exit, so none at all during them; trapped registers do.
  void disk(const std::string& c) {
    if (runs_with(records_, "fio", c, "ios") == 0) fail(c + ": no fio run did requests");
    if (c == "host") return;
    const Tally k = tally(records_, "fio", c, Member::kCounters, {"vcpu_exits", "trapped", "polled", "guest_irqs"});
    if (k.runs == 0) return;
    if (k.without != 0) {
      fail(c + ": " + n(k.without) + " of " + n(k.runs) + " fio runs have no VMM counters (kvmmio --stats)");
      return;
    }
    double ios = 0;
    for (const Run& r : records_.runs)
      if (completed(r, "fio", c) && r.values.count("ios")) ios += r.values.at("ios");
    const std::string requests = format_number(ios);
    info(c + ": fio requests " + requests + ", vCPU exits " + k.sum("vcpu_exits") + ", trapped " + k.sum("trapped") +
         ", polled " + k.sum("polled") + ", guest irqs " + k.sum("guest_irqs"));
    if (c.ends_with("-mirror") && k["vcpu_exits"].sum != 0)
      fail(c + ": " + k.sum("vcpu_exits") + " vCPU exits during " + requests +
           " fio requests, not 0 (the register mirror)");
    if (c.ends_with("-trap") && !(k["vcpu_exits"].sum > 0))
      fail(c + ": no vCPU exits during " + requests + " fio requests with trapped registers");
  }

  const CheckRecords& records_;
  const CheckMatrix& m_;
  CheckOutcome& out_;
};

}  // namespace

CheckOutcome check_run(const CheckRecords& records, const CheckMatrix& matrix, CheckLevel level,
                       const std::string& out_dir) {
  CheckOutcome out;
  check_cells(records, matrix, out.shortfalls);
  if (matrix.micro && !records.micro)
    out.shortfalls.push_back("no micro record: kvm_notify_bench failed (see " + out_dir + "/kvm-bench.txt)");
  check_outside(records, matrix, out.shortfalls);
  check_other_vms(records, out.shortfalls);
  if (level == CheckLevel::kModes) ModesCheck(records, matrix, out).run();
  return out;
}

}  // namespace kvmmio::report
