// SPDX-License-Identifier: BSD-2-Clause
// regs=mirror: the RegisterMirror page reads, word for word and byte for
// byte, as the trapped registers would (virtio 1.2 4.2.2 and 4.2.4), after
// every step a Linux driver takes and every selector value; each change is
// cleaned to the point of coherency after it is made; configuration changes
// follow the ConfigGeneration protocol; the used-buffer bit of
// InterruptStatus reads as set from DRIVER_OK on.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../virtio/harness.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/register_mirror.h"

namespace kvmmio::virtio {
namespace {

using test::EchoDevice;
using test::TransportHarness;

// What the transport cleaned, and what the mirror held at that moment.
struct Clean {
  uint32_t offset;
  size_t size;
  std::vector<uint8_t> bytes;  // the window as it was when the clean was issued
};

struct CleanLog {
  const uint8_t* page = nullptr;  // set once the transport exists
  std::vector<Clean> cleans;
  RegisterMirror::CacheClean recorder() {
    return [this](const void* addr, size_t size) {
      const auto* p = static_cast<const uint8_t*>(addr);
      if (!page) return;  // the transport's construction, before the test looks
      cleans.push_back({static_cast<uint32_t>(p - page), size,
                        std::vector<uint8_t>(page, page + kMmioWindowSize)});
    };
  }
  // The last clean that covered `offset`, or nullptr.
  const Clean* last_covering(uint32_t offset) const {
    for (auto it = cleans.rbegin(); it != cleans.rend(); ++it)
      if (offset >= it->offset && offset < it->offset + it->size) return &*it;
    return nullptr;
  }
  static uint32_t word(const Clean& c, uint32_t offset) {
    uint32_t v;
    std::memcpy(&v, c.bytes.data() + offset, sizeof(v));
    return v;
  }
};

TransportHarness::Config mirrored(uint32_t version, CleanLog* log = nullptr) {
  TransportHarness::Config c;
  c.options.version = version;
  c.options.regs = RegsMode::kMirror;
  if (log) c.mirror_clean = log->recorder();
  return c;
}

class Mirror : public ::testing::TestWithParam<uint32_t> {
 protected:
  Mirror() : h(mirrored(GetParam())) {}

  // Every word of the register area and every configuration byte, as a
  // trapped read returns it, against the mirror. Reads the transport
  // refuses (write-only registers, holes) read as zeros in both.
  void expect_mirror_matches_trapped_reads(const char* when) {
    const RegisterMirror* m = h.transport->mirror();
    ASSERT_NE(m, nullptr);
    for (uint32_t offset = 0; offset < reg::kConfig; offset += 4) {
      const RegisterInfo* info = find_register(offset, GetParam());
      if (!info || info->access == RegAccess::kWrite) {
        EXPECT_EQ(m->read32(offset), 0u) << when << ": 0x" << std::hex << offset;
        continue;
      }
      EXPECT_EQ(m->read32(offset), h.reg(offset)) << when << ": " << info->name;
    }
    for (uint32_t i = 0; i < EchoDevice::kConfigSize; ++i) {
      uint8_t trapped = 0;
      h.transport->mmio_read(reg::kConfig + i, {&trapped, 1});
      EXPECT_EQ(m->bytes(reg::kConfig + i, 1)[0], trapped) << when << ": config byte " << i;
    }
  }

  // Every QueueSel (one past the last queue too) and features selector.
  void expect_every_selector_matches(const char* when) {
    for (uint32_t sel = 0; sel <= 3; ++sel) {
      h.driver->write(reg::kDeviceFeaturesSel, sel);
      expect_mirror_matches_trapped_reads(when);
    }
    for (uint32_t q = 0; q <= 3; ++q) {
      h.driver->write(reg::kQueueSel, q);
      expect_mirror_matches_trapped_reads(when);
    }
  }

  TransportHarness h;
};

TEST_P(Mirror, ReadsAsTheRegistersThroughALinuxDriversLife) {
  expect_mirror_matches_trapped_reads("after construction");
  EXPECT_EQ(h.transport->mirror()->read32(reg::kMagicValue), kMagic);
  EXPECT_EQ(h.transport->mirror()->read32(reg::kVersion), GetParam());
  ASSERT_TRUE(h.driver->probe());
  expect_every_selector_matches("after probe");
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  expect_every_selector_matches("after negotiation");
  ASSERT_TRUE(h.driver->setup_queue(0, TransportHarness::kRing0));
  expect_every_selector_matches("with queue 0 set up");
  ASSERT_TRUE(h.driver->setup_queue(1, TransportHarness::kRing1, 64));
  h.driver->driver_ok();
  expect_every_selector_matches("after DRIVER_OK");
  h.driver->write_config(4, 1, 0x5a);
  expect_mirror_matches_trapped_reads("after a driver's config write");
  h.device->change_config(2, 0xa5);
  expect_mirror_matches_trapped_reads("after a device's config change");
  h.driver->write(reg::kInterruptAck, h.reg(reg::kInterruptStatus));
  expect_mirror_matches_trapped_reads("after the ACK of the config change");
  if (GetParam() == kVersionModern) {
    h.driver->write(reg::kQueueSel, 1);
    h.driver->write(reg::kQueueReady, 0);
    expect_every_selector_matches("after QueueReady = 0");
  }
  h.driver->reset();
  expect_every_selector_matches("after reset");
}

TEST_P(Mirror, DeviceNeedsResetAndAFailedNegotiationReadBack) {
  ASSERT_TRUE(h.driver->probe());
  // A refused transition and an invalid Status value.
  h.driver->write(reg::kStatus, 0x80 | 0x40);
  expect_mirror_matches_trapped_reads("after an invalid Status write");
  h.bring_up();
  h.transport->interrupt().needs_reset("test");
  EXPECT_TRUE(h.transport->mirror()->read32(reg::kStatus) & status::kDeviceNeedsReset);
  EXPECT_TRUE(h.transport->mirror()->read32(reg::kInterruptStatus) & interrupt::kConfigChange);
  expect_mirror_matches_trapped_reads("after DEVICE_NEEDS_RESET");
}

// With the mirror the VMM cannot clear the used-buffer bit when the guest
// ACKs it (the kernel takes that write), so it reads as set from DRIVER_OK
// until reset; the config-change bit comes and goes as before.
TEST_P(Mirror, UsedBufferBitReadsAsSetFromDriverOkOn) {
  const RegisterMirror& m = *h.transport->mirror();
  ASSERT_TRUE(h.driver->probe());
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  ASSERT_TRUE(h.driver->setup_queue(0, TransportHarness::kRing0));
  EXPECT_EQ(m.read32(reg::kInterruptStatus), 0u);
  h.driver->driver_ok();
  EXPECT_EQ(m.read32(reg::kInterruptStatus), interrupt::kUsedBuffer);
  h.driver->write(reg::kInterruptAck, interrupt::kUsedBuffer);  // as if it had exited
  EXPECT_EQ(m.read32(reg::kInterruptStatus), interrupt::kUsedBuffer);
  h.device->change_config(0, 1);
  EXPECT_EQ(m.read32(reg::kInterruptStatus), interrupt::kAll);
  EXPECT_EQ(h.interrupts(), 1u);
  h.driver->write(reg::kInterruptAck, interrupt::kConfigChange);
  EXPECT_EQ(m.read32(reg::kInterruptStatus), interrupt::kUsedBuffer);
  h.driver->reset();
  EXPECT_EQ(m.read32(reg::kInterruptStatus), 0u);
  EXPECT_EQ(h.counters().guest_errors.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Versions, Mirror, ::testing::Values(kVersionLegacy, kVersionModern),
                         [](const auto& info) { return info.param == kVersionLegacy ? "Legacy" : "Modern"; });

TEST(MirrorOff, RegsTrapHasNoMirror) {
  TransportHarness h(TransportHarness::Config{});
  EXPECT_EQ(h.transport->options().regs, RegsMode::kTrap);
  EXPECT_EQ(h.transport->mirror(), nullptr);
}

// Each value a trapped write changes is cleaned after it is stored: the
// clean that covers the register sees the new value.
TEST(MirrorCoherency, EveryChangeIsCleanedAfterItIsMade) {
  CleanLog log;
  TransportHarness h(mirrored(kVersionModern, &log));
  log.page = h.transport->mirror()->page().data();
  // The construction's own fill was cleaned too; watch what comes next.
  ASSERT_TRUE(h.driver->probe());
  log.cleans.clear();
  h.driver->add_status(status::kAcknowledge);
  const Clean* c = log.last_covering(reg::kStatus);
  ASSERT_NE(c, nullptr) << "Status changed without a clean";
  EXPECT_EQ(CleanLog::word(*c, reg::kStatus), status::kAcknowledge);

  log.cleans.clear();
  h.driver->write(reg::kQueueSel, 7);  // no such queue: QueueNumMax reads 0
  c = log.last_covering(reg::kQueueNumMax);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CleanLog::word(*c, reg::kQueueNumMax), 0u);

  // A write that changes nothing readable costs no clean.
  log.cleans.clear();
  h.driver->write(reg::kQueueSel, 7);
  EXPECT_TRUE(log.cleans.empty());
}

// Linux reads ConfigGeneration, the fields, ConfigGeneration, and retries
// on a difference. A reader overlapping the change must see a step: the
// generation moves before the bytes do, and again after.
TEST(MirrorCoherency, ConfigChangesFollowTheGenerationProtocol) {
  CleanLog log;
  TransportHarness h(mirrored(kVersionModern, &log));
  log.page = h.transport->mirror()->page().data();
  h.bring_up();
  const uint32_t before = h.driver->config_generation();
  log.cleans.clear();
  h.device->change_config(3, 0x77);

  // The sequence of cleans: generation, configuration bytes, generation.
  std::vector<uint32_t> order;
  for (const Clean& c : log.cleans) order.push_back(c.offset);
  ASSERT_GE(order.size(), 3u);
  EXPECT_EQ(order[0], reg::kConfigGeneration);
  EXPECT_EQ(order[1], reg::kConfig);
  EXPECT_EQ(order[2], reg::kConfigGeneration);
  const uint32_t first = CleanLog::word(log.cleans[0], reg::kConfigGeneration);
  const uint32_t second = CleanLog::word(log.cleans[2], reg::kConfigGeneration);
  EXPECT_NE(first, before);
  EXPECT_NE(second, first);
  // The bytes were still old when the first step was published, and new
  // only after it.
  EXPECT_NE(log.cleans[0].bytes[reg::kConfig + 3], 0x77);
  EXPECT_EQ(log.cleans[1].bytes[reg::kConfig + 3], 0x77);
  EXPECT_EQ(h.transport->mirror()->read32(reg::kConfigGeneration), h.driver->config_generation());
}

TEST(RegisterMirrorPage, UpdatesOnlyWhatChangesWithinTheWindow) {
  std::vector<std::pair<uint32_t, size_t>> cleans;
  const uint8_t* base = nullptr;
  RegisterMirror m(kMmioWindowSize, [&](const void* p, size_t n) {
    cleans.emplace_back(static_cast<uint32_t>(static_cast<const uint8_t*>(p) - base), n);
  });
  base = m.page().data();
  EXPECT_GE(m.page().size(), kMmioWindowSize);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % m.page().size(), 0u) << "not page-aligned";
  EXPECT_TRUE(m.update32(0x70, 0x0f));
  EXPECT_FALSE(m.update32(0x70, 0x0f));
  const uint8_t bytes[3] = {1, 2, 3};
  EXPECT_TRUE(m.update(0x101, bytes));
  EXPECT_EQ(cleans, (std::vector<std::pair<uint32_t, size_t>>{{0x70, 4}, {0x101, 3}}));
  EXPECT_EQ(m.updates(), 2u);
  EXPECT_EQ(m.read32(0x70), 0x0fu);
  EXPECT_THROW(m.update32(0x200, 1), std::out_of_range);
  EXPECT_THROW(m.update32(0x71, 1), std::invalid_argument);
  EXPECT_THROW(RegisterMirror(m.page().size() + 4), std::invalid_argument);
}

}  // namespace
}  // namespace kvmmio::virtio
