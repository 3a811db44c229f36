// SPDX-License-Identifier: BSD-2-Clause
// virtio-vsock without vhost-vsock (absent on the x86-64 development host):
// the configuration space as the driver reads it and the
// features offered over what vhost-vsock offers. The device on the real
// vhost-vsock runs in the nested arm64 platform's L2 boot
// (tests/arm64/scenarios/vmm-boot.sh, "vsock").
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/virtio_spec.h"
#include "kvmmio/vsock/virtio_vsock.h"
#include "kvmmio/vsock/virtio_vsock_spec.h"

namespace kvmmio::vsock {
namespace {

TEST(VirtioVsockConfig, GuestCidIsLittleEndian64BitsAtOffsetZero) {
  std::array<uint8_t, 8> all{};
  VirtioVsock::read_config_of(0x12345678u, 0, all);
  EXPECT_EQ(all, (std::array<uint8_t, 8>{0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0}));
  VirtioVsock::read_config_of(0xfffffffeu, 0, all);
  EXPECT_EQ(all, (std::array<uint8_t, 8>{0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0})) << "the upper half is 0";
  EXPECT_EQ(spec::kConfigSize, 8u);
}

// Linux reads the le64 as two 32-bit reads; any aligned 8/16/32-bit read
// the transport lets through sees the same bytes.
TEST(VirtioVsockConfig, PartialReadsSeeTheirSliceOfTheField) {
  const uint32_t cid = 0xa1b2c3d4u;
  const uint8_t bytes[8] = {0xd4, 0xc3, 0xb2, 0xa1, 0, 0, 0, 0};
  for (uint32_t width : {1u, 2u, 4u})
    for (uint32_t offset = 0; offset + width <= 8; offset += width) {
      std::array<uint8_t, 4> out;
      out.fill(0xee);
      VirtioVsock::read_config_of(cid, offset, std::span<uint8_t>(out.data(), width));
      for (uint32_t i = 0; i < width; ++i)
        EXPECT_EQ(out[i], bytes[offset + i]) << "width " << width << " offset " << offset << " byte " << i;
      for (uint32_t i = width; i < 4; ++i) EXPECT_EQ(out[i], 0xee) << "wrote past the read";
    }
  std::array<uint8_t, 4> beyond{1, 1, 1, 1};
  VirtioVsock::read_config_of(cid, 6, beyond);
  EXPECT_EQ(beyond, (std::array<uint8_t, 4>{0, 0, 0, 0})) << "past the field: zeros";
}

TEST(VirtioVsockFeatures, OffersSeqpacketOnlyWhenVhostDoes) {
  using virtio::feature::bit;
  // What Linux's vhost-vsock offers (VHOST_VSOCK_FEATURES): vhost's own
  // (NOTIFY_ON_EMPTY, INDIRECT_DESC, EVENT_IDX, LOG_ALL, ANY_LAYOUT,
  // VERSION_1), ACCESS_PLATFORM, and SEQPACKET from Linux 5.14.
  const uint64_t vhost_common = bit(24) | bit(28) | bit(29) | bit(26) | bit(27) | bit(32) | bit(33);
  EXPECT_EQ(VirtioVsock::offered_features(vhost_common | bit(spec::kFSeqpacket)), bit(spec::kFSeqpacket));
  EXPECT_EQ(VirtioVsock::offered_features(vhost_common), 0u) << "an older kernel: stream sockets only";
  // Transport bits are the transport's to add (VERSION_1, INDIRECT_DESC,
  // EVENT_IDX), and STREAM (0) / NO_IMPLIED_STREAM (2) are not vhost's.
  EXPECT_EQ(VirtioVsock::offered_features(~uint64_t{0}), bit(spec::kFSeqpacket));
}

// The device itself (without its backend): what the transport asks it.
TEST(VirtioVsockDevice, ConfigIsReadOnlyAndAWriteIsACountedGuestError) {
  GuestMemory memory;
  EventLoop loop;
  VirtioVsock device(VsockOptions{.cid = 42}, memory, loop, virtio::feature::bit(spec::kFSeqpacket));
  EXPECT_EQ(device.device_id(), 19u);
  EXPECT_EQ(device.num_queues(), 3u);
  EXPECT_EQ(device.config_size(), 8u);
  EXPECT_EQ(device.device_features(), virtio::feature::bit(spec::kFSeqpacket));
  EXPECT_TRUE(device.backend_owns_queue(spec::kRxQueue));
  EXPECT_TRUE(device.backend_owns_queue(spec::kTxQueue));
  EXPECT_FALSE(device.backend_owns_queue(spec::kEventQueue)) << "the event queue is the VMM's";
  const uint8_t junk[4] = {1, 2, 3, 4};
  device.write_config(0, junk);
  device.write_config(4, std::span<const uint8_t>(junk, 2));
  EXPECT_EQ(device.counters().config_writes.load(), 2u);
  EXPECT_EQ(device.guest_errors(), 2u);
  std::array<uint8_t, 8> after{};
  device.read_config(0, after);
  EXPECT_EQ(after, (std::array<uint8_t, 8>{42, 0, 0, 0, 0, 0, 0, 0})) << "the CID did not change";
}

TEST(VirtioVsockSpec, DeviceIdAndQueues) {
  EXPECT_EQ(spec::kDeviceId, 19u);
  EXPECT_EQ(spec::kRxQueue, 0u);
  EXPECT_EQ(spec::kTxQueue, 1u);
  EXPECT_EQ(spec::kEventQueue, 2u);
  EXPECT_EQ(VhostVsock::kRxVring, spec::kRxQueue) << "vhost's vrings are the virtio queues";
  EXPECT_EQ(VhostVsock::kTxVring, spec::kTxQueue);
}

TEST(VhostVsock, MissingDeviceNamesTheModule) {
  // A path that cannot exist stands for a host without the module, so the
  // message is checked everywhere, the arm64 platform (which has it) too.
  try {
    VhostVsock v(3, "/nonexistent/vhost-vsock");
    FAIL() << "opened a missing vhost-vsock device";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("modprobe vhost_vsock"), std::string::npos) << e.what();
  }
}

// The real /dev/vhost-vsock (the arm64 platform loads vhost_vsock): a CID
// binds, a second instance asking for it gets CidInUse, a reserved CID is
// refused by the kernel, and closing the first frees its CID.
TEST(VhostVsock, TheKernelHoldsACidForOneInstance) {
  if (!VhostVsock::available()) GTEST_SKIP() << "no /dev/vhost-vsock here (modprobe vhost_vsock)";
  constexpr uint32_t kCid = 0xfffffff0u;  // far from the platform's guests' CIDs
  {
    VhostVsock first(kCid);
    EXPECT_EQ(first.cid(), kCid);
    EXPECT_THROW(VhostVsock second(kCid), CidInUse);
  }
  VhostVsock again(kCid);  // freed when the first closed
  EXPECT_EQ(again.cid(), kCid);
  EXPECT_THROW(VhostVsock reserved(2), UserError) << "CID 2 is the host's";
}

}  // namespace
}  // namespace kvmmio::vsock
