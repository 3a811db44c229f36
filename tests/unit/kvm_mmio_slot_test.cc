// SPDX-License-Identifier: BSD-2-Clause
// What can be known of KvmMmioSlot without /dev/kvm: regs=mirror is the
// transport's default, and the slot's decision to fall back to regs=trap
// where KVM has no read-only memory slots. The slot itself, on real KVM:
// tests/kvm/kvm_mmio_slot_kvm_test.cc.
#include <gtest/gtest.h>

#include "kvmmio/base/error.h"
#include "kvmmio/virtio/kvm_mmio_slot.h"
#include "kvmmio/virtio/transport_options.h"

namespace kvmmio::virtio {
namespace {

TEST(TransportOptions, RegsMirrorIsTheDefault) {
  EXPECT_EQ(TransportOptions{}.regs, RegsMode::kMirror);
  EXPECT_EQ(KvmMmioSlotConfig{}.options.regs, RegsMode::kMirror);
}

TEST(KvmMmioSlot, MirrorNeedsReadOnlySlotsAndFallsBackToTrap) {
  EXPECT_EQ(usable_regs_mode(RegsMode::kMirror, /*readonly_slots=*/true), RegsMode::kMirror);
  EXPECT_EQ(usable_regs_mode(RegsMode::kMirror, /*readonly_slots=*/false), RegsMode::kTrap);
}

TEST(KvmMmioSlot, TrapStaysTrapEitherWay) {
  EXPECT_EQ(usable_regs_mode(RegsMode::kTrap, /*readonly_slots=*/true), RegsMode::kTrap);
  EXPECT_EQ(usable_regs_mode(RegsMode::kTrap, /*readonly_slots=*/false), RegsMode::kTrap);
}

}  // namespace
}  // namespace kvmmio::virtio
