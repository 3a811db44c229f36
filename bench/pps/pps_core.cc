// SPDX-License-Identifier: BSD-2-Clause
#include "bench/pps/pps_core.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "kvmmio/base/error.h"
#include "vmm/process/parse.h"

namespace kvmmio::pps {
namespace {

constexpr uint32_t kMagic = 0x53505055;  // "UPPS" little-endian

void put_le(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

double rounded(double v, double scale) { return std::round(v * scale) / scale; }

}  // namespace

std::string usage() {
  return "usage: udp_pps server [--port P]\n"
         "       udp_pps client HOST [--port P] [--seconds S] [--payload BYTES] [--rate PPS]\n"
         "                           [--batch N] [--flows N] [--reverse] [--json]\n";
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  bool client_only = false;
  const auto client_option = [&client_only](auto set) {
    return [&client_only, set](const std::string& v) {
      client_only = true;
      set(v);
    };
  };
  const std::vector<std::string> positional = parse_cli(
      {{"--port", "a TCP port, e.g. --port 5400",
        [&o](const std::string& v) { o.port = static_cast<int>(parse_uint(v, "--port " + v, 1, 65535)); }},
       {"--seconds", "a duration, e.g. --seconds 3", client_option([&o](const std::string& v) {
          o.seconds = parse_positive_decimal(v, "--seconds " + v, 3600);
        })},
       {"--payload", "a UDP payload size, e.g. --payload 64", client_option([&o](const std::string& v) {
          o.payload = parse_uint(v, "--payload " + v, kHeaderBytes, kMaxPayload);
        })},
       {"--rate", "datagrams per second, e.g. --rate 10000 (0: as fast as possible)",
        client_option([&o](const std::string& v) { o.rate = parse_uint(v, "--rate " + v, 0, 100'000'000); })},
       {"--batch", "datagrams per sendmmsg/recvmmsg call, e.g. --batch 64",
        client_option([&o](const std::string& v) {
          o.batch = static_cast<unsigned>(parse_uint(v, "--batch " + v, 1, 1024));
        })},
       {"--flows", "UDP flows (source ports) to spread the datagrams over, e.g. --flows 2",
        client_option([&o](const std::string& v) {
          o.flows = static_cast<unsigned>(parse_uint(v, "--flows " + v, 1, kMaxFlows));
        })},
       {"--reverse", "", client_option([&o](const std::string&) { o.reverse = true; })},
       {"--json", "", client_option([&o](const std::string&) { o.json = true; })}},
      args, 2);
  if (positional.empty()) throw UserError("missing mode: give server or client");
  if (positional[0] == "server") {
    o.mode = Options::Mode::kServer;
    if (positional.size() > 1) throw UserError("unexpected argument '" + positional[1] + "'");
    // The client chooses a run's parameters and tells the server.
    if (client_only) throw UserError("server takes only --port (the client sets the rest)");
    return o;
  }
  if (positional[0] != "client") throw UserError("mode must be server or client, not '" + positional[0] + "'");
  if (positional.size() < 2) throw UserError("client needs a HOST");
  o.mode = Options::Mode::kClient;
  o.host = positional[1];
  return o;
}

void write_header(uint8_t* payload, uint32_t run_id, uint64_t seq) {
  put_le(payload, kMagic, 4);
  put_le(payload + 4, run_id, 4);
  put_le(payload + 8, seq, 8);
}

bool read_header(const uint8_t* data, size_t len, uint32_t run_id, uint64_t& seq) {
  if (len < kHeaderBytes || get_le(data, 4) != kMagic || get_le(data + 4, 4) != run_id) return false;
  seq = get_le(data + 8, 8);
  return true;
}

void SeqTracker::add(const uint8_t* data, size_t len) {
  uint64_t seq = 0;
  if (!read_header(data, len, run_id_, seq)) {
    ++datagrams_;
    ++stray_;
    return;
  }
  add_seq(seq);
}

void SeqTracker::add_seq(uint64_t seq) {
  ++datagrams_;
  if (seq >= kMaxSeq) {
    ++stray_;
    return;
  }
  const size_t word = static_cast<size_t>(seq / 64);
  const uint64_t bit = uint64_t{1} << (seq % 64);
  if (word >= seen_.size()) seen_.resize(std::max(word + 1, seen_.size() * 2), 0);
  if (seen_[word] & bit) {
    ++duplicates_;
    return;
  }
  seen_[word] |= bit;
  ++unique_;
  if (seq < next_)
    ++reordered_;
  else
    next_ = seq + 1;
}

SeqTracker::Loss SeqTracker::account(uint64_t sent) const {
  Loss l;
  l.sent = sent;
  // Distinct numbers at or above `sent` cannot be from this sender's count;
  // count them aside so that received + lost == sent holds.
  for (uint64_t seq = sent; seq < next_; ++seq)
    if (seen_[seq / 64] & (uint64_t{1} << (seq % 64))) ++l.beyond;
  l.received = unique_ - l.beyond;
  l.lost = sent - l.received;
  return l;
}

std::string to_json(const Result& r) {
  const double s = r.seconds > 0 ? r.seconds : 1;
  const double loss_pct = r.loss.sent ? 100.0 * double(r.loss.lost) / double(r.loss.sent) : 0;
  return nlohmann::ordered_json{{"sender", r.sender},
                                {"payload", r.payload},
                                {"rate", r.rate},
                                {"flows", r.flows},
                                {"sent", r.loss.sent},
                                {"received", r.loss.received},
                                {"lost", r.loss.lost},
                                {"loss_pct", rounded(loss_pct, 1000)},
                                {"duplicates", r.duplicates},
                                {"reordered", r.reordered},
                                {"stray", r.stray + r.loss.beyond},
                                {"sources", r.sources},
                                {"seconds", rounded(r.seconds, 1000)},
                                {"pps_sent", rounded(double(r.loss.sent) / s, 10)},
                                {"pps_received", rounded(double(r.loss.received) / s, 10)}}
      .dump();
}

std::string to_text(const Result& r) {
  const double s = r.seconds > 0 ? r.seconds : 1;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s sent %llu datagrams of %zu bytes in %.2f s (%.0f per s); %llu received (%.0f per s), "
                "%llu lost (%.2f%%)",
                r.sender.c_str(), static_cast<unsigned long long>(r.loss.sent), r.payload, r.seconds,
                double(r.loss.sent) / s, static_cast<unsigned long long>(r.loss.received),
                double(r.loss.received) / s, static_cast<unsigned long long>(r.loss.lost),
                r.loss.sent ? 100.0 * double(r.loss.lost) / double(r.loss.sent) : 0.0);
  return buf;
}

}  // namespace kvmmio::pps
