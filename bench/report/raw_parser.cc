// SPDX-License-Identifier: BSD-2-Clause
// parse_raw: one function per record kind, plus the checks that need the
// records read before (duplicates, contradicting meta).
#include "bench/report/raw_parser.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/report/input_error.h"
#include "bench/report/micro_file.h"
#include "bench/report/raw_line.h"

namespace kvmmio::report {
namespace {

Direction direction(RawLine& line) {
  const std::string d = line.text("dir");
  if (d == "g2h") return Direction::kGuestToHost;
  if (d == "h2g") return Direction::kHostToGuest;
  throw InputError(line.source(), "dir=" + d + " is neither g2h nor h2g");
}

// The counters come all together (the VMM reports all of them) or not at
// all (no VM); a partial set means a broken writer, not an absent value.
std::optional<RunCounters> counters(RawLine& line) {
  static constexpr const char* kNames[] = {"vcpu_exits", "wakeups", "injected", "relayed",
                                          "trapped",    "polled",  "guest_irqs"};
  size_t present = 0;
  for (const char* n : kNames) present += line.has(n);
  if (present == 0) return std::nullopt;
  if (present != std::size(kNames)) {
    for (const char* n : kNames)
      if (!line.has(n))
        throw InputError(line.source(), std::string("counter ") + n + "= missing (give all seven counters or none)");
  }
  RunCounters c;
  c.vcpu_exits = line.count("vcpu_exits");
  c.wakeups = line.count("wakeups");
  c.injected = line.count("injected");
  c.relayed = line.count("relayed");
  c.trapped = line.count("trapped");
  c.polled = line.count("polled");
  c.guest_irqs = line.count("guest_irqs");
  return c;
}

void add_iperf(RawLine& line, RawData& into) {
  IperfRun r;
  r.source = line.source();
  r.config = line.text("config");
  r.mtu = line.count32("mtu");
  r.dir = direction(line);
  r.streams = line.count32("streams");
  r.rep = line.count32("rep");
  r.failed = line.optional_text("failed");
  if (!r.failed) {
    r.bytes = line.count("bytes");
    r.seconds = line.number("seconds");
    r.bps = line.number("bps");
  } else {
    // What a failed run managed to measure is not used, but it is allowed.
    for (const char* k : {"bytes", "seconds", "bps"}) line.optional_text(k);
  }
  r.counters = counters(line);
  line.reject_unused();
  for (const IperfRun& o : into.iperf) {
    if (o.config == r.config && o.mtu == r.mtu && o.dir == r.dir && o.streams == r.streams && o.rep == r.rep)
      throw InputError(r.source, "iperf run config=" + r.config + " mtu=" + std::to_string(r.mtu) + " dir=" +
                                     to_string(r.dir) + " streams=" + std::to_string(r.streams) + " rep=" +
                                     std::to_string(r.rep) + " already given at " + o.source.str());
  }
  into.iperf.push_back(std::move(r));
}

void add_rr(RawLine& line, RawData& into) {
  RrRun r;
  r.source = line.source();
  r.config = line.text("config");
  r.mtu = line.count32("mtu");
  r.rep = line.count32("rep");
  r.failed = line.optional_text("failed");
  if (!r.failed) {
    r.transactions = line.count("transactions");
    r.seconds = line.number("seconds");
    r.tps = line.number("tps");
    r.p50_us = line.number("p50_us");
    r.p90_us = line.number("p90_us");
    r.p99_us = line.number("p99_us");
  } else {
    for (const char* k : {"transactions", "seconds", "tps", "p50_us", "p90_us", "p99_us"}) line.optional_text(k);
  }
  line.reject_unused();
  for (const RrRun& o : into.rr) {
    if (o.config == r.config && o.mtu == r.mtu && o.rep == r.rep)
      throw InputError(r.source, "rr run config=" + r.config + " mtu=" + std::to_string(r.mtu) +
                                     " rep=" + std::to_string(r.rep) + " already given at " + o.source.str());
  }
  into.rr.push_back(std::move(r));
}

// The whole file, or nothing if it is not a readable regular file.
std::optional<std::string> read_whole(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return s.str();
}

void add_micro(RawLine& line, const std::string& base_dir, RawData& into) {
  MicroResult m;
  m.source = line.source();
  m.platform = line.text("platform");
  m.file = line.text("file");
  line.reject_unused();
  for (const MicroResult& o : into.micro)
    if (o.platform == m.platform)
      throw InputError(m.source, "micro platform=" + m.platform + " already given at " + o.source.str());
  const std::filesystem::path p(m.file);
  const std::string path = p.is_absolute() ? m.file : (std::filesystem::path(base_dir) / p).string();
  const std::optional<std::string> text = read_whole(path);
  if (!text) throw InputError(m.source, "cannot read " + path);
  try {
    read_micro_json(*text, m);
  } catch (const std::runtime_error& e) {
    throw InputError(m.source, path + ": " + e.what());
  }
  into.micro.push_back(std::move(m));
}

void add_meta(const RawLine& line, RawData& into) {
  for (const auto& [key, value] : line.fields()) {
    bool seen = false;
    for (const MetaEntry& o : into.meta) {
      if (o.key != key) continue;
      // Merged files must describe the same set-up, or the cells would mix
      // measurements of different machines.
      if (o.value != value)
        throw InputError(line.source(), "meta " + key + "=" + value + " contradicts " + key + "=" + o.value +
                                            " at " + o.source.str());
      seen = true;
    }
    if (!seen) into.meta.push_back({line.source(), key, value});
  }
}

}  // namespace

const char* to_string(Direction d) { return d == Direction::kGuestToHost ? "g2h" : "h2g"; }

void parse_raw(std::string_view text, const std::string& name, const std::string& base_dir, RawData& into) {
  int number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    const size_t first = raw.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || raw[first] == '#') continue;
    RawLine line(raw, Source{name, number});
    if (line.kind() == "iperf") {
      add_iperf(line, into);
    } else if (line.kind() == "rr") {
      add_rr(line, into);
    } else if (line.kind() == "micro") {
      add_micro(line, base_dir, into);
    } else if (line.kind() == "meta") {
      add_meta(line, into);
    } else {
      throw InputError(line.source(), "unknown record kind '" + line.kind() + "' (expected meta, iperf, rr or micro)");
    }
  }
}

void read_raw_file(const std::string& path, RawData& into) {
  const std::optional<std::string> text = read_whole(path);
  if (!text) throw InputError(path + ": cannot read the raw file");
  parse_raw(*text, path, std::filesystem::path(path).parent_path().string(), into);
}

}  // namespace kvmmio::report
