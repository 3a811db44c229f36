// SPDX-License-Identifier: BSD-2-Clause
// udp_pps: its command line, its datagram header, the loss accounting from
// sequence numbers, and both ends over loopback.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "bench/pps/pps_core.h"
#include "bench/pps/pps_net.h"
#include "kvmmio/base/error.h"

namespace kvmmio::pps {
namespace {

std::string option_error(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(UdpPpsOptions, ClientDefaultsAndEveryOption) {
  const Options d = parse_options({"client", "10.0.0.2"});
  EXPECT_EQ(d.mode, Options::Mode::kClient);
  EXPECT_EQ(d.host, "10.0.0.2");
  EXPECT_EQ(d.port, kDefaultPort);
  EXPECT_EQ(d.payload, 64u);
  EXPECT_EQ(d.rate, 0u);
  EXPECT_EQ(d.flows, 1u);
  EXPECT_FALSE(d.reverse);
  EXPECT_FALSE(d.json);

  const Options o = parse_options({"client", "h", "--port", "6000", "--seconds=0.5", "--payload", "1472",
                                   "--rate", "1000", "--batch", "8", "--flows", "4", "--reverse", "--json"});
  EXPECT_EQ(o.port, 6000);
  EXPECT_DOUBLE_EQ(o.seconds, 0.5);
  EXPECT_EQ(o.payload, 1472u);
  EXPECT_EQ(o.rate, 1000u);
  EXPECT_EQ(o.batch, 8u);
  EXPECT_EQ(o.flows, 4u);
  EXPECT_TRUE(o.reverse);
  EXPECT_TRUE(o.json);

  const Options s = parse_options({"server", "--port", "5400"});
  EXPECT_EQ(s.mode, Options::Mode::kServer);
  EXPECT_EQ(s.port, 5400);
}

TEST(UdpPpsOptions, RefusedWithTheReason) {
  EXPECT_NE(option_error({}).find("missing mode"), std::string::npos);
  EXPECT_NE(option_error({"listen"}).find("server or client"), std::string::npos);
  EXPECT_NE(option_error({"client"}).find("needs a HOST"), std::string::npos);
  EXPECT_NE(option_error({"server", "extra"}).find("unexpected argument 'extra'"), std::string::npos);
  EXPECT_NE(option_error({"server", "--payload", "64"}).find("only --port"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--payload", "15"}).find("--payload 15: too small"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--payload", "65508"}).find("too large"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--batch", "0"}).find("--batch 0"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--flows", "0"}).find("--flows 0"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--flows", "65"}).find("--flows 65"), std::string::npos);
  EXPECT_NE(option_error({"server", "--flows", "2"}).find("only --port"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--seconds", "-1"}).find("--seconds"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--rate", "1e6"}).find("--rate 1e6"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--json", "--json"}).find("given twice"), std::string::npos);
  EXPECT_NE(option_error({"client", "h", "--bogus"}).find("unknown option '--bogus'"), std::string::npos);
}

TEST(UdpPpsHeader, RoundTripsAndKeepsOtherRunsOut) {
  uint8_t p[kHeaderBytes + 4] = {};
  write_header(p, 0xabcdef01, 0x0102030405060708ull);
  uint64_t seq = 0;
  ASSERT_TRUE(read_header(p, sizeof p, 0xabcdef01, seq));
  EXPECT_EQ(seq, 0x0102030405060708ull);
  EXPECT_EQ(p[8], 0x08);  // little-endian on the wire
  EXPECT_FALSE(read_header(p, sizeof p, 0xabcdef02, seq));
  EXPECT_FALSE(read_header(p, kHeaderBytes - 1, 0xabcdef01, seq));
  p[0] ^= 1;
  EXPECT_FALSE(read_header(p, sizeof p, 0xabcdef01, seq));
}

TEST(UdpPpsLoss, InOrderWithGaps) {
  SeqTracker t(1);
  for (uint64_t s : {0, 1, 2, 5, 6, 9}) t.add_seq(s);
  const SeqTracker::Loss l = t.account(10);
  EXPECT_EQ(l.sent, 10u);
  EXPECT_EQ(l.received, 6u);
  EXPECT_EQ(l.lost, 4u);  // 3, 4, 7, 8
  EXPECT_EQ(l.beyond, 0u);
  EXPECT_EQ(t.reordered(), 0u);
  EXPECT_EQ(t.duplicates(), 0u);
}

TEST(UdpPpsLoss, DuplicatesCountOnceAndReorderedStillCount) {
  SeqTracker t(1);
  for (uint64_t s : {0, 2, 1, 2, 2, 4, 3, 200}) t.add_seq(s);
  EXPECT_EQ(t.datagrams(), 8u);
  EXPECT_EQ(t.unique(), 6u);
  EXPECT_EQ(t.duplicates(), 2u);
  EXPECT_EQ(t.reordered(), 2u);  // 1 after 2, 3 after 4
  const SeqTracker::Loss l = t.account(300);
  EXPECT_EQ(l.received, 6u);
  EXPECT_EQ(l.lost, 294u);
  EXPECT_EQ(l.received + l.lost, l.sent);
}

TEST(UdpPpsLoss, NumbersAtOrAboveTheCountAreSetAsideAndStraysIgnored) {
  SeqTracker t(7);
  for (uint64_t s : {0, 1, 5, 6}) t.add_seq(s);
  uint8_t other[kHeaderBytes];
  write_header(other, 8, 2);  // another run's
  t.add(other, sizeof other);
  t.add(other, 3);  // too short for a header
  t.add_seq(kMaxSeq);
  EXPECT_EQ(t.stray(), 3u);
  const SeqTracker::Loss l = t.account(5);  // the sender claims 5: 5 and 6 cannot be its
  EXPECT_EQ(l.received, 2u);
  EXPECT_EQ(l.beyond, 2u);
  EXPECT_EQ(l.lost, 3u);
  EXPECT_EQ(l.received + l.lost, l.sent);
  const SeqTracker::Loss none = SeqTracker(7).account(0);
  EXPECT_EQ(none.received + none.lost, 0u);
}

TEST(UdpPpsResult, JsonHasTheRatesAndTheCounts) {
  Result r;
  r.sender = "server";
  r.payload = 64;
  r.loss = {1000, 900, 100, 1};
  r.duplicates = 2;
  r.stray = 3;
  r.flows = 2;
  r.sources = 2;
  r.seconds = 2;
  const auto j = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(j["sender"], "server");
  EXPECT_EQ(j["sent"], 1000);
  EXPECT_EQ(j["received"], 900);
  EXPECT_EQ(j["lost"], 100);
  EXPECT_DOUBLE_EQ(j["loss_pct"].get<double>(), 10);
  EXPECT_EQ(j["stray"], 4);  // with the one beyond the count
  EXPECT_EQ(j["flows"], 2);
  EXPECT_EQ(j["sources"], 2);
  EXPECT_DOUBLE_EQ(j["pps_sent"].get<double>(), 500);
  EXPECT_DOUBLE_EQ(j["pps_received"].get<double>(), 450);
  EXPECT_NE(to_text(r).find("900 received (450 per s), 100 lost (10.00%)"), std::string::npos) << to_text(r);
}

// Both ends on 127.0.0.1: the server on a thread, one run each way.
Result loopback(bool reverse, uint64_t rate, unsigned flows = 1) {
  UniqueFd listener = listen_control(0);
  std::string server_error;
  std::thread server([&] {
    try {
      serve_one(listener.get());
    } catch (const std::exception& e) {
      server_error = e.what();
    }
  });
  Options o = parse_options({"client", "127.0.0.1", "--seconds", "0.5"});
  o.port = local_port(listener.get());
  o.reverse = reverse;
  o.rate = rate;
  o.flows = flows;
  Result r;
  try {
    r = run_client(o);
  } catch (...) {
    // The server may still wait in accept() (the client never connected,
    // e.g. with lo down): shutting the listener down makes accept() fail,
    // so the test fails instead of hanging.
    ::shutdown(listener.get(), SHUT_RDWR);
    server.join();
    throw;
  }
  server.join();
  EXPECT_EQ(server_error, "");
  return r;
}

TEST(UdpPpsLoopback, ClientSendsServerCounts) {
  const Result r = loopback(false, 0);
  EXPECT_EQ(r.sender, "client");
  EXPECT_GT(r.loss.sent, 0u);
  EXPECT_GT(r.loss.received, 0u);
  EXPECT_EQ(r.loss.received + r.loss.lost, r.loss.sent);
  EXPECT_EQ(r.duplicates, 0u);
  EXPECT_EQ(r.stray, 0u);
  EXPECT_EQ(r.flows, 1u);
  EXPECT_EQ(r.sources, 1u);  // the server saw one flow
  EXPECT_GE(r.seconds, 0.5);
}

// Flows are sockets of their own: the receiver sees each source port, in
// either direction.
TEST(UdpPpsLoopback, FlowsArriveFromThatManySourcePorts) {
  const Result sent = loopback(false, 0, 3);
  EXPECT_EQ(sent.flows, 3u);
  EXPECT_EQ(sent.sources, 3u);
  EXPECT_EQ(sent.loss.received + sent.loss.lost, sent.loss.sent);
  EXPECT_EQ(sent.duplicates, 0u);
  const Result back = loopback(true, 4000, 5);
  EXPECT_EQ(back.sources, 5u);
  EXPECT_EQ(back.loss.received + back.loss.lost, back.loss.sent);
}

TEST(UdpPpsLoopback, ReverseServerSendsAtARate) {
  const Result r = loopback(true, 2000);
  EXPECT_EQ(r.sender, "server");
  EXPECT_GT(r.loss.received, 0u);
  EXPECT_EQ(r.loss.received + r.loss.lost, r.loss.sent);
  EXPECT_EQ(r.duplicates, 0u);
  // Paced: never ahead of the rate, and (even on a busy machine) not far behind.
  EXPECT_LE(r.loss.sent, 2000 * r.seconds + 1);
  EXPECT_GE(r.loss.sent, 400u);
}

}  // namespace
}  // namespace kvmmio::pps
