// SPDX-License-Identifier: BSD-2-Clause
// virtio-fs against the tests' own vhost-user backend (tests/vhost/
// test_backend.h): --fs's parsing, the configuration space, what the
// device hands the backend at DRIVER_OK and takes back at a reset, and a
// backend that stalls, refuses or goes away. The device against Debian's
// virtiofsd, mounted by a Linux guest, runs on the nested arm64 platform
// (tests/arm64/scenarios/vmm-boot.sh, "fs").
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/fs/fs_options.h"
#include "kvmmio/fs/virtio_fs.h"
#include "kvmmio/fs/virtio_fs_spec.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/virtio/virtio_spec.h"
#include "tests/vhost/test_backend.h"

namespace kvmmio::fs {
namespace {

using namespace std::chrono_literals;
using vhost::test::AckingBackend;
using vhost::test::Behaviour;
using vhost::test::kEventIdx;
using vhost::test::kProtocolFeaturesBit;
using vhost::test::kRingFeatures;
using vhost::test::Message;
using vhost::test::TestBackend;
using vhost::user::Request;

TEST(VirtioFsConfig, TagIsNulPaddedAndOneRequestQueueFollows) {
  std::array<uint8_t, spec::kConfigSize> all{};
  VirtioFs::read_config_of("share", 0, all);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(all.data())), "share");
  for (unsigned i = 5; i < spec::kTagSize; ++i) EXPECT_EQ(all[i], 0) << i;
  EXPECT_EQ(all[36] | all[37] << 8 | all[38] << 16 | all[39] << 24, 1);
  // A 36-byte tag fills the field, with no NUL.
  VirtioFs::read_config_of(std::string(36, 't'), 0, all);
  EXPECT_EQ(all[35], 't');
  // A read past the end sees zeros (the transport never asks it; a test may).
  std::array<uint8_t, 8> tail{};
  VirtioFs::read_config_of("share", 36, tail);
  EXPECT_EQ(tail, (std::array<uint8_t, 8>{1, 0, 0, 0, 0, 0, 0, 0}));
}

// A virtio-fs device in the hand-over's surroundings (test_backend.h).
class VirtioFsDevice : public vhost::test::HandOverTest {
 protected:
  std::unique_ptr<VirtioFs> make(std::chrono::milliseconds timeout = 30s) {
    return std::make_unique<VirtioFs>(FsOptions{"share", "test.sock"},
                                      vhost::VhostUserFrontend(link.take_front(), "test.sock", timeout), memory,
                                      loop);
  }
  bool activate(VirtioFs& device) { return HandOverTest::activate(device, kRingFeatures | kEventIdx, VirtioFs::kQueueSize); }
};

TEST_F(VirtioFsDevice, RefusesABackendWithoutTheRingFeaturesTheTransportOffers) {
  backend.features = virtio::feature::bit(virtio::feature::kVersion1);  // no INDIRECT_DESC
  const std::string msg = vhost::test::refusal([this] { make(); });
  EXPECT_NE(msg.find("test.sock lacks VIRTIO_RING_F_INDIRECT_DESC"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Debian's virtiofsd"), std::string::npos) << msg;
}

TEST_F(VirtioFsDevice, WithholdsEventIdxWhereTheBackendLacksIt) {
  auto full = make();
  EXPECT_TRUE(full->backend_event_idx());
  EXPECT_EQ(full->withheld_transport_features(), 0u);
  AckingBackend plain;
  plain.features = kRingFeatures;
  TestBackend other(plain.answer());
  VirtioFs device(FsOptions{"t", "s"}, vhost::VhostUserFrontend(other.take_front(), "s", 30s), memory, loop);
  EXPECT_FALSE(device.backend_event_idx());
  EXPECT_EQ(device.withheld_transport_features(), virtio::feature::bit(virtio::feature::kRingEventIdx));
  EXPECT_EQ(device.device_features(), 0u);
  EXPECT_EQ(device.device_id(), 26u);
  EXPECT_TRUE(device.backend_owns_queue(0) && device.backend_owns_queue(1));
}

TEST_F(VirtioFsDevice, DriverOkHandsEveryQueueOverAndResetTakesThemBack) {
  auto device = make();
  ASSERT_TRUE(activate(*device));
  const std::vector<Request> per_vring{Request::kSetVringNum,  Request::kSetVringBase, Request::kSetVringAddr,
                                       Request::kSetVringKick, Request::kSetVringCall, Request::kSetVringErr,
                                       Request::kSetVringEnable};
  std::vector<Request> expected{Request::kSetFeatures, Request::kSetMemTable};
  for (int q = 0; q < 2; ++q) expected.insert(expected.end(), per_vring.begin(), per_vring.end());
  EXPECT_EQ(backend.kept_requests(), expected);
  {
    std::lock_guard l(backend.mutex);
    // The guest's features, with the protocol-features bit negotiated.
    EXPECT_EQ(backend.kept[0].u64(), kRingFeatures | kEventIdx | kProtocolFeaturesBit);
    // Each queue's kick is its own ioeventfd; the call is the irqfd.
    for (uint32_t q = 0; q < 2; ++q) {
      const Message& kick = backend.kept[2 + q * 7 + 3];
      const Message& call_msg = backend.kept[2 + q * 7 + 4];
      ASSERT_EQ(kick.fds.size(), 1u);
      ASSERT_EQ(call_msg.fds.size(), 1u);
      struct stat sent{}, own{};
      ASSERT_EQ(::fstat(kick.fds[0].get(), &sent), 0);
      ASSERT_EQ(::fstat(kicks[q].get(), &own), 0);
      EXPECT_EQ(sent.st_ino, own.st_ino) << "queue " << q;
      EXPECT_EQ(kick.u64() & 0xff, q);
      EXPECT_EQ(backend.kept[2 + q * 7 + 6].as<vhost::user::VringState>().num, 1u) << "enabled";
    }
  }
  EXPECT_EQ(device->handover_counters().activations.load(), 1u);
  // The acks woke the socket's watch; none of them may read as a hang-up.
  loop.flush();
  EXPECT_EQ(interrupt.resets.load(), 0);
  EXPECT_EQ(device->handover_counters().backend_hangups.load(), 0u);

  reset(*device);
  const std::vector<Request> kept = backend.kept_requests();
  EXPECT_EQ(std::vector<Request>(kept.end() - 2, kept.end()),
            (std::vector<Request>{Request::kGetVringBase, Request::kGetVringBase}));
  // A second DRIVER_OK starts over.
  ASSERT_TRUE(activate(*device));
  EXPECT_EQ(device->handover_counters().activations.load(), 2u);
  reset(*device);
}

TEST_F(VirtioFsDevice, ABackendThatStallsFailsTheActivationWithinItsBound) {
  backend.misbehave_on = Request::kSetMemTable;
  backend.behaviour = Behaviour::kStall;
  auto device = make(200ms);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(activate(*device));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(device->handover_counters().backend_failures.load(), 1u);
  // The connection is out of step: the next DRIVER_OK fails at once,
  // without a word to the backend.
  const size_t sent = backend.kept_requests().size();
  EXPECT_FALSE(activate(*device));
  EXPECT_EQ(backend.kept_requests().size(), sent);
  EXPECT_EQ(device->handover_counters().backend_failures.load(), 2u);
}

TEST_F(VirtioFsDevice, ABackendThatClosesMidSetUpFailsTheActivation) {
  backend.misbehave_on = Request::kSetVringAddr;
  backend.behaviour = Behaviour::kClose;
  auto device = make();
  EXPECT_FALSE(activate(*device));
  EXPECT_EQ(device->handover_counters().backend_failures.load(), 1u);
}

TEST_F(VirtioFsDevice, ABackendThatGoesAwayWhileRunningPutsTheDeviceInNeedsReset) {
  auto device = make();
  ASSERT_TRUE(activate(*device));
  link.close_now();
  for (int i = 0; i < 500 && interrupt.resets.load() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(interrupt.resets.load(), 1);
  EXPECT_EQ(device->handover_counters().backend_hangups.load(), 1u);
  // The reset after it says nothing to a backend that is gone, and the
  // next DRIVER_OK fails naming what to do.
  reset(*device);
  EXPECT_FALSE(activate(*device));
  EXPECT_EQ(device->handover_counters().backend_failures.load(), 1u);
}

TEST_F(VirtioFsDevice, ConfigIsReadOnlyAndAWriteIsACountedGuestError) {
  auto device = make();
  const uint8_t bytes[4] = {1, 2, 3, 4};
  device->write_config(0, bytes);
  EXPECT_EQ(device->device_counters().config_writes.load(), 1u);
  EXPECT_EQ(device->guest_errors(), 1u);
  std::array<uint8_t, 5> tag{};
  device->read_config(0, tag);
  EXPECT_EQ(std::string(tag.begin(), tag.end()), "share");
}

}  // namespace
}  // namespace kvmmio::fs
