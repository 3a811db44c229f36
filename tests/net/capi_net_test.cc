// SPDX-License-Identifier: BSD-2-Clause
// The C API's net device (kvmmio_net_create) on real KVM, a real tap and
// real vhost-net: made from a kvmmio_net_config, put behind a transport,
// brought up by a driver that reaches the registers only through
// kvmmio_transport_mmio(), it hands its queues to vhost-net, which moves a
// guest's frame out of the tap with no VMM code in the path. Needs
// /dev/kvm and /dev/vhost-net (the nested arm64 L1 in CI, where
// KVMMIO_REQUIRE_KVM and KVMMIO_REQUIRE_VHOST make their absence a failure)
// and root for the tap.
#include <gtest/gtest.h>
#include <net/if.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "../kvm/kvm_fixture.h"
#include "../virtio/c_transport_window.h"
#include "../virtio/driver_ring.h"
#include "../virtio/harness.h"
#include "../virtio/mmio_driver.h"
#include "../virtio/wait_limit.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/kvmmio.h"
#include "kvmmio/net/vhost_net.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/virtio_spec.h"
#include "packet_socket.h"

namespace kvmmio::net {
namespace {

using namespace virtio::test;
// The layout of the transport tests' harness: RAM, the window, two rings, buffers.
using H = TransportHarness;
constexpr uint32_t kGsi = 7;

class CApiNetTest : public test::KvmTest {
 protected:
  void SetUp() override {
    KvmTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    if (!VhostNet::available()) {
      const char* req = std::getenv("KVMMIO_REQUIRE_VHOST");
      if (req && std::string(req) == "1") FAIL() << "/dev/vhost-net missing but KVMMIO_REQUIRE_VHOST=1";
      GTEST_SKIP() << "no /dev/vhost-net on this machine (modprobe vhost_net)";
    }
  }
};

TEST_F(CApiNetTest, VhostMovesAGuestFrameOutOfTheTap) {
  kvmmio_vm* vm = nullptr;
  ASSERT_EQ(kvmmio_vm_create(&vm), KVMMIO_OK) << kvmmio_last_error();
  void* host = nullptr;
  ASSERT_EQ(kvmmio_vm_add_ram(vm, H::kRam, H::kRamSize, &host), KVMMIO_OK) << kvmmio_last_error();
  GuestMemory memory;  // the driver's view of the same RAM
  memory.add_ram({.gpa = H::kRam, .size = H::kRamSize, .host = host});

  kvmmio_device* net = nullptr;
  kvmmio_net_config config = KVMMIO_NET_CONFIG_INIT;
  config.tap = "kvcapi0";
  config.vhost = KVMMIO_VHOST_ON;
  ASSERT_EQ(kvmmio_net_create(vm, &config, &net), KVMMIO_OK) << kvmmio_last_error();
  EXPECT_EQ(kvmmio_net_uses_vhost(net), 1);
  kvmmio_transport* transport = nullptr;
  ASSERT_EQ(kvmmio_transport_create(vm, net, H::kBase, kGsi, nullptr, &transport), KVMMIO_OK) << kvmmio_last_error();
  {
    CTransportWindow window(transport);
    MmioDriver driver(window);
    ASSERT_TRUE(driver.probe());
    EXPECT_EQ(driver.device_id(), 1u);
    const uint64_t wanted = (1ull << spec::kFVersion1) | (1ull << spec::kFMac) | (1ull << spec::kFStatus);
    ASSERT_TRUE(driver.initialize(wanted));
    const auto rx_layout = driver.setup_queue(0, H::kRing0, 64);
    const auto tx_layout = driver.setup_queue(1, H::kRing1, 64);
    ASSERT_TRUE(rx_layout && tx_layout);
    DriverRing tx(memory, *tx_layout);
    driver.driver_ok();
    ASSERT_EQ(driver.status() & virtio::status::kDeviceNeedsReset, 0u);

    uint64_t vhost = 0;
    ASSERT_EQ(kvmmio_transport_counter(transport, "vhost", &vhost), KVMMIO_OK) << kvmmio_last_error();
    EXPECT_EQ(vhost, 1u);

    // The tap as the net device opened it: the test's side of the wire.
    const int ifindex = static_cast<int>(if_nametoindex("kvcapi0"));
    ASSERT_GT(ifindex, 0);
    test::PacketSocket sock(ifindex);
    const auto frame = test::test_frame(5, 600);
    // VERSION_1's header, all zero, then the frame.
    std::vector<uint8_t> bytes(sizeof(spec::NetHdrV1) + frame.size(), 0);
    std::copy(frame.begin(), frame.end(), bytes.begin() + sizeof(spec::NetHdrV1));
    ASSERT_TRUE(memory.write(H::kBuffers, bytes.data(), bytes.size()));
    const Buffer b[] = {{H::kBuffers, static_cast<uint32_t>(bytes.size()), false}};
    tx.add(b);
    tx.publish();
    driver.notify(1);  // trapped here: the transport kicks vhost's fd
    const auto got = sock.receive(test::kWaitLimitMs);
    ASSERT_TRUE(got) << "the guest's frame never left the tap";
    EXPECT_EQ(*got, frame);
    EXPECT_TRUE(eventually([&] { return tx.used_idx() == 1; })) << "vhost did not return the buffer";
    driver.reset();
  }
  kvmmio_transport_destroy(transport);
  EXPECT_EQ(kvmmio_device_destroy(net), KVMMIO_OK) << kvmmio_last_error();
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK) << kvmmio_last_error();
}

}  // namespace
}  // namespace kvmmio::net
