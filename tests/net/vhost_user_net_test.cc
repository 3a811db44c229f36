// SPDX-License-Identifier: BSD-2-Clause
// VhostUserNet against the tests' own vhost-user backend (test_backend.h;
// DPDK's vhost PMD is the nested platform's): what the device offers from
// the backend's features, what of the driver's it passes on, its
// configuration space, and the hand-over of both queues.
#include "kvmmio/net/vhost_user_net.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/virtio/virtio_spec.h"
#include "tests/vhost/test_backend.h"

namespace kvmmio::net {
namespace {

using namespace std::chrono_literals;
using vhost::test::AckingBackend;
using vhost::test::kEventIdx;
using vhost::test::kProtocolFeaturesBit;
using vhost::test::kRingFeatures;
using vhost::test::TestBackend;
using vhost::user::Request;

constexpr std::array<uint8_t, 6> kMac{0x02, 0x6b, 0x76, 0x00, 0x00, 0x01};
constexpr uint64_t bit(unsigned n) { return 1ull << n; }
// What DPDK's vhost PMD offers, roughly: offloads, mergeable buffers, a
// control queue, multiqueue and link status (the last three not passed on).
constexpr uint64_t kSwitchNetFeatures = bit(spec::kFCsum) | bit(spec::kFGuestCsum) | bit(spec::kFHostTso4) |
                                        bit(spec::kFMrgRxbuf) | bit(spec::kFCtrlVq) | bit(spec::kFMq) |
                                        bit(spec::kFStatus);

class VhostUserNetDevice : public vhost::test::HandOverTest {
 protected:
  VhostUserNetDevice() { backend.features |= kSwitchNetFeatures; }
  std::unique_ptr<VhostUserNet> make() {
    return std::make_unique<VhostUserNet>(kMac, vhost::VhostUserFrontend(link.take_front(), "sw.sock", 30s), memory,
                                          loop);
  }
};

TEST_F(VhostUserNetDevice, OffersItsMacAndTheBackendsOffloadsButNoControlQueueOrMultiqueue) {
  auto device = make();
  EXPECT_EQ(device->device_id(), 1u);
  EXPECT_EQ(device->num_queues(), 2u);
  EXPECT_EQ(device->device_features(), bit(spec::kFMac) | bit(spec::kFCsum) | bit(spec::kFGuestCsum) |
                                           bit(spec::kFHostTso4) | bit(spec::kFMrgRxbuf));
  EXPECT_EQ(device->withheld_transport_features(), 0u);
  EXPECT_TRUE(device->backend_owns_queue(0) && device->backend_owns_queue(1));
}

TEST_F(VhostUserNetDevice, WithholdsEventIdxWhereTheBackendLacksIt) {
  backend.features &= ~kEventIdx;
  EXPECT_EQ(make()->withheld_transport_features(), kEventIdx);
}

TEST_F(VhostUserNetDevice, RefusesABackendWithoutIndirectDescriptorsNamingTheFix) {
  backend.features = bit(virtio::feature::kVersion1) | kSwitchNetFeatures;
  const std::string msg = vhost::test::refusal([this] { make(); });
  EXPECT_NE(msg.find("sw.sock lacks VIRTIO_RING_F_INDIRECT_DESC"), std::string::npos) << msg;
  EXPECT_NE(msg.find("DPDK's vhost PMD"), std::string::npos) << msg;
}

// The MAC is the VMM's: the driver's VIRTIO_NET_F_MAC stays here, the rest
// of what it accepted goes to the backend, and both queues are handed over.
TEST_F(VhostUserNetDevice, DriverOkPassesTheBackendOnlyItsOwnFeaturesAndBothQueues) {
  auto device = make();
  const uint64_t accepted = kRingFeatures | kEventIdx | bit(spec::kFMac) | bit(spec::kFMrgRxbuf);
  ASSERT_TRUE(activate(*device, accepted, VhostUserNet::kQueueSize));
  const std::vector<Request> kept = backend.kept_requests();
  ASSERT_GE(kept.size(), 2u + 2 * 7);
  EXPECT_EQ(kept[0], Request::kSetFeatures);
  {
    std::lock_guard l(backend.mutex);
    EXPECT_EQ(backend.kept[0].u64(), kRingFeatures | kEventIdx | bit(spec::kFMrgRxbuf) | kProtocolFeaturesBit);
    EXPECT_EQ(backend.kept[2].as<vhost::user::VringState>().num, VhostUserNet::kQueueSize);  // rx's SET_VRING_NUM
  }
  EXPECT_EQ(device->handover_counters().activations.load(), 1u);
  reset(*device);
  const std::vector<Request> after = backend.kept_requests();
  EXPECT_EQ(std::vector<Request>(after.end() - 2, after.end()),
            (std::vector<Request>{Request::kGetVringBase, Request::kGetVringBase}));
}

TEST_F(VhostUserNetDevice, ConfigHoldsTheMacAndLinkUpAndIsReadOnly) {
  auto device = make();
  std::array<uint8_t, 8> config{};
  device->read_config(0, config);
  EXPECT_EQ(std::vector<uint8_t>(config.begin(), config.begin() + 6), std::vector<uint8_t>(kMac.begin(), kMac.end()));
  EXPECT_EQ(config[6] | config[7] << 8, spec::kStatusLinkUp);
  const uint8_t other[6] = {0x02, 0, 0, 0, 0, 9};
  device->write_config(0, other);
  EXPECT_EQ(device->device_counters().config_writes.load(), 1u);
  EXPECT_EQ(device->guest_errors(), 1u);
  device->read_config(0, config);
  EXPECT_EQ(config[5], kMac[5]);
}

TEST_F(VhostUserNetDevice, ReportsTheBackendsFeaturesAndTheHandOversCountersByName) {
  auto device = make();
  std::vector<std::string> names;
  uint64_t reported_features = 0;
  device->visit_counters([&](const char* name, uint64_t value) {
    names.push_back(name);
    if (std::string(name) == "backend_features") reported_features = value;
  });
  EXPECT_EQ(names, (std::vector<std::string>{"backend_features", "backend_event_idx", "activations",
                                             "backend_failures", "backend_hangups", "config_writes"}));
  EXPECT_EQ(reported_features, backend.features);
}

}  // namespace
}  // namespace kvmmio::net
