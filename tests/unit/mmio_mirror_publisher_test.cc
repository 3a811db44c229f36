// SPDX-License-Identifier: BSD-2-Clause
// MirrorPublisher alone (hw/virtio/mmio_mirror.h), fed by a scripted
// MirrorSource (a stand-in for the transport's wiring): what a refresh
// shows, Status and InterruptStatus published from any thread, and the
// ConfigGeneration steps around a configuration change.
#include <gtest/gtest.h>

#include <map>

#include "hw/virtio/mmio_mirror.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "../virtio/transport_parts.h"

namespace kvmmio::virtio::test {
namespace {

// Register values by offset (0 where unset), and a counted generation.
struct ScriptedSource final : MirrorSource {
  uint32_t register_value(const RegisterInfo& info) override {
    ++register_reads;
    const auto it = values.find(info.offset);
    return it == values.end() ? 0 : it->second;
  }
  uint32_t device_status() const override { return status; }
  uint32_t interrupt_status() const override { return isr; }
  uint32_t config_generation() const override { return generation; }
  uint32_t step_config_generation() override { return ++generation; }

  std::map<uint32_t, uint32_t> values;
  uint32_t status = 0, isr = 0, generation = 0;
  int register_reads = 0;
};

TransportOptions mirror_on() {
  return {.version = kVersionModern, .notify = NotifyMode::kTrap, .regs = RegsMode::kMirror};
}
struct MirrorBench {
  MirrorBench() : bench(mirror_on()) {}
  uint32_t shown(uint32_t offset) { return mirror.page()->read32(offset); }
  PartsBench bench;
  ScriptedSource source;
  MirrorPublisher mirror{*bench.ctx, source};
};

TEST(MirrorOwner, ARefreshShowsWhatTheSourceReadsForEveryReadableRegister) {
  MirrorBench m;
  ASSERT_TRUE(m.mirror.enabled());
  m.source.values = {{reg::kMagicValue, 0x74726976}, {reg::kStatus, 0xf}, {reg::kQueueSel, 0x55}};
  m.mirror.refresh();
  EXPECT_EQ(m.shown(reg::kMagicValue), 0x74726976u);
  EXPECT_EQ(m.shown(reg::kStatus), 0xfu);
  EXPECT_EQ(m.shown(reg::kQueueSel), 0u) << "a write-only register reads as zero, not as the source says";
  EXPECT_GT(m.source.register_reads, 0);
  const uint64_t updates = m.bench.ctx->counters.mirror_updates.load();
  EXPECT_GE(updates, 1u);
  m.mirror.refresh();
  EXPECT_EQ(m.bench.ctx->counters.mirror_updates.load(), updates) << "nothing changed, nothing counted";
  m.source.values[reg::kStatus] = 0x7;
  m.mirror.refresh();
  EXPECT_EQ(m.shown(reg::kStatus), 0x7u);
  EXPECT_EQ(m.bench.ctx->counters.mirror_updates.load(), updates + 1);
}

TEST(MirrorOwner, StatusAndInterruptStatusArePublishedAlone) {
  MirrorBench m;
  m.mirror.refresh();
  m.source.status = status::kDriverOk | status::kDeviceNeedsReset;
  m.source.isr = interrupt::kConfigChange;
  const int reads = m.source.register_reads;
  m.mirror.publish_status();
  EXPECT_EQ(m.shown(reg::kStatus), m.source.status);
  EXPECT_EQ(m.shown(reg::kInterruptStatus), m.source.isr);
  EXPECT_EQ(m.source.register_reads, reads) << "publishing the status reads no other register";
}

TEST(MirrorOwner, AConfigurationChangeIsFramedByTwoGenerationSteps) {
  MirrorBench m;
  m.mirror.refresh();  // the first fill: no steps
  EXPECT_EQ(m.source.generation, 0u);
  m.bench.device->change_config(0, 0x5a);
  m.mirror.publish_config_change();
  EXPECT_EQ(m.source.generation, 2u) << "one step before the bytes change, one after";
  EXPECT_EQ(m.shown(reg::kConfigGeneration), 2u);
  EXPECT_EQ(m.mirror.page()->bytes(reg::kConfig, 1)[0], 0x5a);
  // Unchanged bytes take no step.
  m.mirror.publish_config_change();
  m.mirror.refresh();
  EXPECT_EQ(m.source.generation, 2u);
}

TEST(MirrorOwner, WithRegsTrapThereIsNoPageAndTheSourceIsNeverRead) {
  PartsBench bench;  // regs=trap
  ScriptedSource source;
  MirrorPublisher mirror(*bench.ctx, source);
  EXPECT_FALSE(mirror.enabled());
  EXPECT_EQ(mirror.page(), nullptr);
  mirror.refresh();
  mirror.publish_status();
  mirror.publish_config_change();
  EXPECT_EQ(source.register_reads, 0);
  EXPECT_EQ(source.generation, 0u);
}

}  // namespace
}  // namespace kvmmio::virtio::test
