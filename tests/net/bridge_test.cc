// SPDX-License-Identifier: BSD-2-Clause
// NetOptions::bridge (--net ...,bridge=NAME) on this machine's real bridges: the tap becomes a
// port of an existing bridge; a missing bridge, an interface that is no
// bridge and a tap that is another bridge's port are refused naming the
// fix; a tap already in the bridge is left as it is.
#include <gtest/gtest.h>
#include <limits.h>
#include <net/if.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/net/virtio_net.h"
#include "link_control.h"

namespace kvmmio::net {
namespace {

using test::TestBridge;

std::string master_of(const std::string& dev) {
  char target[PATH_MAX];
  const ssize_t n = ::readlink(("/sys/class/net/" + dev + "/master").c_str(), target, sizeof target - 1);
  if (n <= 0) return "";
  const std::string path(target, static_cast<size_t>(n));
  return path.substr(path.rfind('/') + 1);
}

struct NetDevice {
  NetDevice(const std::string& tap, const std::string& bridge) {
    memory.add_ram(0x40000000, 1 << 20);
    NetOptions o;
    o.tap = tap;
    o.bridge = bridge;
    o.vhost = VhostMode::kOff;
    device = std::make_unique<VirtioNet>(o, memory, loop);
  }
  GuestMemory memory;
  EventLoop loop;
  std::unique_ptr<VirtioNet> device;
};

std::string refusal(const std::string& tap, const std::string& bridge) {
  try {
    NetDevice d(tap, bridge);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Bridge, TheTapBecomesAPortOfTheBridge) {
  TestBridge br("kvmbrt0");
  if (!br.created()) GTEST_SKIP() << "cannot create a bridge here (CAP_NET_ADMIN, bridge module)";
  {
    NetDevice d("kvmbrtap0", "kvmbrt0");
    EXPECT_EQ(master_of("kvmbrtap0"), "kvmbrt0");
  }
  // A persistent tap that is a port already: left as it is.
  test::create_persistent_tap("kvmbrtap1");
  {
    NetDevice first("kvmbrtap1", "kvmbrt0");
    ASSERT_EQ(master_of("kvmbrtap1"), "kvmbrt0");
  }
  {
    NetDevice again("kvmbrtap1", "kvmbrt0");
    EXPECT_EQ(master_of("kvmbrtap1"), "kvmbrt0");
  }
  // ... and another bridge's port is refused.
  TestBridge other("kvmbrt1");
  ASSERT_TRUE(other.created());
  const std::string msg = refusal("kvmbrtap1", "kvmbrt1");
  EXPECT_NE(msg.find("is a port of kvmbrt0 already"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nomaster"), std::string::npos) << msg;
  test::delete_link("kvmbrtap1");
}

TEST(Bridge, AMissingBridgeOrOneThatIsNoBridgeNamesTheFix) {
  test::delete_link("kvmbrnone");
  std::string msg = refusal("kvmbrtap2", "kvmbrnone");
  EXPECT_NE(msg.find("there is no interface kvmbrnone"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ip link add kvmbrnone type bridge"), std::string::npos) << msg;
  msg = refusal("kvmbrtap2", "lo");
  EXPECT_NE(msg.find("lo is not a bridge"), std::string::npos) << msg;
}

}  // namespace
}  // namespace kvmmio::net
