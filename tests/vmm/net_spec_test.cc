// SPDX-License-Identifier: BSD-2-Clause
// --net specifications: every check that needs no system call is made at
// parse time, and every refusal starts with "--net" and the key.
#include "vmm/cli/device_specs.h"

#include <gtest/gtest.h>

#include <array>
#include <set>

#include "kvmmio/base/error.h"

namespace kvmmio::vmm {

using net::NetOptions;
using net::VhostMode;
using net::default_mac;
namespace {

std::string refusal(const std::string& spec) {
  try {
    parse_net_spec(spec);
  } catch (const UserError& e) {
    return e.what();
  }
  return "accepted";
}

void expect_refused(const std::string& spec, const std::string& starts, const std::string& says) {
  const std::string msg = refusal(spec);
  EXPECT_EQ(msg.rfind(starts, 0), 0u) << spec << ": " << msg;
  EXPECT_NE(msg.find(says), std::string::npos) << spec << ": " << msg;
}

TEST(NetSpecStrict, EachKeyOnce) {
  expect_refused("tap=a,tap=b", "--net tap=a,tap=b", "tap= is given twice");
  expect_refused("tap=a,vhost=on,vhost=off", "--net tap=a,vhost=on,vhost=off", "vhost= is given twice");
  expect_refused("tap=a,irq=relay,irq=irqfd", "--net", "irq= is given twice");
}

TEST(NetSpecStrict, NoEmptyItems) {
  expect_refused("tap=a,", "--net tap=a,", "a comma at the end");
  expect_refused("tap=a,,mtu=1500", "--net", "empty item");
  expect_refused(",tap=a", "--net", "empty item");
  expect_refused("", "--net", "empty");
  expect_refused("tap", "--net tap", "is not KEY=VALUE");
}

TEST(NetSpecStrict, TapNamesFollowTheKernelsRules) {
  EXPECT_EQ(parse_net_spec("tap=" + std::string(15, 'a')).tap, std::string(15, 'a'));
  expect_refused("tap=" + std::string(16, 'a'), "--net tap=", "1 to 15 characters");
  expect_refused("tap=" + std::string(17, 'a'), "--net tap=", "1 to 15 characters");
  expect_refused("tap=", "--net tap=:", "1 to 15 characters");
  expect_refused("tap=a/b", "--net tap=a/b:", "no '/', ':' or white space");
  expect_refused("tap=a:b", "--net tap=a:b:", "no '/', ':' or white space");
  expect_refused("tap=a b", "--net tap=a b:", "no '/', ':' or white space");
  expect_refused("tap=a\tb", "--net tap=a\tb:", "white space");
  expect_refused("tap=.", "--net tap=.:", "'.' and '..'");
  expect_refused("tap=..", "--net tap=..:", "'.' and '..'");
  EXPECT_EQ(parse_net_spec("tap=kvm-tap.0_x").tap, "kvm-tap.0_x");
}

TEST(NetSpecStrict, MacsAreUnicastNonZeroAndProperHex) {
  const auto mac = parse_net_spec("tap=a,mac=02:6B:76:0a:Ff:01").mac;
  ASSERT_TRUE(mac);
  EXPECT_EQ(*mac, (std::array<uint8_t, 6>{0x02, 0x6b, 0x76, 0x0a, 0xff, 0x01}));
  expect_refused("tap=a,mac=00:00:00:00:00:00", "--net mac=00:00:00:00:00:00:", "all-zero");
  expect_refused("tap=a,mac=01:00:5e:00:00:01", "--net mac=01:00:5e:00:00:01:", "multicast");
  expect_refused("tap=a,mac=ff:ff:ff:ff:ff:ff", "--net mac=", "multicast");
  // Not hex at all: said so, not called multicast.
  for (const char* bad : {"-1:00:00:00:00:01", "2:6b:76:00:00:01", "02:6b:76:00:00:1", "02:6b:76:00:00:01:",
                          "02-6b-76-00-00-01", "02:6b:76:00:00:0g", "+2:6b:76:00:00:01", " 2:6b:76:00:00:01",
                          "zz"}) {
    const std::string msg = refusal(std::string("tap=a,mac=") + bad);
    EXPECT_EQ(msg.rfind(std::string("--net mac=") + bad + ": expected six hex bytes", 0), 0u) << msg;
    EXPECT_EQ(msg.find("multicast"), std::string::npos) << msg;
  }
}

TEST(NetSpecStrict, NumbersAreDigitsOnly) {
  expect_refused("tap=a,queues= 2", "--net queues= 2:", "not a whole number");
  expect_refused("tap=a,queues=+2", "--net queues=+2:", "not a whole number");
  expect_refused("tap=a,queues=2 ", "--net queues=2 :", "not a whole number");
  expect_refused("tap=a,mtu=+1500", "--net mtu=+1500:", "not a whole number");
  expect_refused("tap=a,mtu=-1500", "--net mtu=-1500:", "not a whole number");
  expect_refused("tap=a,mtu=0x5dc", "--net mtu=0x5dc:", "not a whole number");
  expect_refused("tap=a,mtu=65536", "--net mtu=65536:", "from 68 to 65535");
  expect_refused("tap=a,queues=17", "--net queues=17:", "from 1 to 16");
  expect_refused("tap=a,queues=4294967297", "--net queues=4294967297:", "too large");
  EXPECT_EQ(parse_net_spec("tap=a,mtu=1500,queues=16").mtu, 1500);
}

TEST(NetSpecStrict, TransportKeysAndUnknownKeysNameNet) {
  expect_refused("tap=t0,irq=msi", "--net irq=msi:", "irq=irqfd or irq=relay");
  expect_refused("tap=t0,notify=poll", "--net notify=poll:", "notify=ioeventfd or notify=trap");
  expect_refused("tap=t0,version=3", "--net version=3:", "version=1");
  expect_refused("tap=t0,version= 2", "--net version= 2:", "version=1");
  expect_refused("tap=t0,color=blue", "--net color=blue:", "unknown");
  expect_refused("tap=t0,color=blue", "--net color=blue:", "tap, vhost-user, vhost, mac, queues, mtu");
  expect_refused("vhost=on", "--net vhost=on:", "needs tap=NAME");
  expect_refused("tap=t0,vhost=yes", "--net vhost=yes:", "on, off or auto");
}

// poll_us: vhost-net's busy polling, 0 (off) to 10000 us, never with
// vhost=off (the userspace backend has no such thing).
TEST(NetSpecStrict, PollUsIsVhostsAndBounded) {
  EXPECT_EQ(parse_net_spec("tap=a").poll_us, 0u);
  EXPECT_EQ(parse_net_spec("tap=a,poll_us=50").poll_us, 50u);
  EXPECT_EQ(parse_net_spec("tap=a,vhost=on,poll_us=10000").poll_us, 10000u);
  EXPECT_EQ(parse_net_spec("tap=a,vhost=off,poll_us=0").poll_us, 0u);
  expect_refused("tap=a,poll_us=10001", "--net poll_us=10001:", "from 0 to 10000");
  expect_refused("tap=a,poll_us=-1", "--net poll_us=-1:", "not a whole number");
  expect_refused("tap=a,vhost=off,poll_us=50", "--net tap=a,vhost=off,poll_us=50:", "vhost=on or auto");
}

// vhost-user=PATH: a backend's socket instead of a tap; mac= and the
// transport's keys apply, the tap's own keys are refused by name.
TEST(NetSpecVhostUser, TakesASocketAMacAndTransportKeysOnly) {
  const NetOptions o = parse_net_spec("vhost-user=/run/sw0.sock,mac=02:6b:76:00:00:07,irq=relay");
  EXPECT_EQ(o.vhost_user, "/run/sw0.sock");
  EXPECT_TRUE(o.tap.empty());
  EXPECT_EQ(o.effective_mac(), (std::array<uint8_t, 6>{0x02, 0x6b, 0x76, 0, 0, 7}));
  EXPECT_EQ(o.transport.irq, virtio::IrqMode::kRelay);
  // Without mac=, the socket's path names the MAC, as a tap's name does.
  EXPECT_EQ(parse_net_spec("vhost-user=/run/sw0.sock").effective_mac(), default_mac("/run/sw0.sock"));
  EXPECT_NE(default_mac("/run/sw0.sock"), default_mac("/run/sw1.sock"));
  expect_refused("vhost-user=", "--net vhost-user= is empty", "running backend");
  for (const char* key : {"tap=t0", "vhost=on", "queues=2", "mtu=9000", "bridge=br0", "poll_us=5"})
    expect_refused(std::string("vhost-user=/s,") + key, "--net vhost-user=/s,", "the tap's setting");
  expect_refused("mac=02:6b:76:00:00:07", "--net", "vhost-user=PATH");
  // The backend's reply bound: vhost-user's alone, 1 ms to 60 s.
  EXPECT_EQ(parse_net_spec("vhost-user=/s,reply_timeout_ms=30000").reply_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(parse_net_spec("vhost-user=/s").reply_timeout, vhost::VhostUserFrontend::kDefaultReplyTimeout);
  expect_refused("vhost-user=/s,reply_timeout_ms=60001", "--net reply_timeout_ms=60001:", "from 1 to 60000");
  expect_refused("tap=t0,reply_timeout_ms=100", "--net tap=t0,reply_timeout_ms=100:", "use it with vhost-user=PATH");
}

}  // namespace
}  // namespace kvmmio::vmm
