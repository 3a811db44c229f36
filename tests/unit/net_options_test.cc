// SPDX-License-Identifier: BSD-2-Clause
// NetOptions' checks and names that are the library's: the default MAC of
// a tap and the rules of an interface name (the --net words are the
// program's: tests/vmm/net_spec_test.cc).
#include "kvmmio/net/net_options.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>

#include "kvmmio/base/error.h"

namespace kvmmio::net {
namespace {

// The default MAC: stable (the same tap gives the same MAC in every
// release: FNV-1a's values are fixed), locally administered unicast, and
// apart for taps named apart.
TEST(NetOptionsDefaultMac, IsAStableLocallyAdministeredHashOfTheTapName) {
  auto fnv = [](const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    return h;
  };
  // Known answer: FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published
  // test vector); its low 48 bits dc:4c:86:01:ec:8c, first byte made
  // locally administered unicast: de.
  ASSERT_EQ(fnv("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(default_mac("a"), (std::array<uint8_t, 6>{0xde, 0x4c, 0x86, 0x01, 0xec, 0x8c}));
  std::set<std::array<uint8_t, 6>> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string tap = "kvmtap" + std::to_string(i);
    const auto mac = default_mac(tap);
    EXPECT_EQ(mac, default_mac(tap));
    EXPECT_EQ(mac[0] & 0x03, 0x02) << tap << ": not locally administered unicast";
    seen.insert(mac);
  }
  EXPECT_EQ(seen.size(), 1000u) << "two of 1000 tap names share a default MAC";
}

TEST(InterfaceName, TheSameRulesForTapsOpenedLater) {
  EXPECT_NO_THROW(check_interface_name("kvmtap0", "tap 'kvmtap0'"));
  try {
    check_interface_name("a/b", "tap 'a/b'");
    ADD_FAILURE() << "accepted a/b";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("tap 'a/b': ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace kvmmio::net
