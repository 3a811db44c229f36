// SPDX-License-Identifier: BSD-2-Clause
// GsiRouting: the table that is resent whole on every change.
#include <gtest/gtest.h>

#include "kvmmio/gsi_routing.h"

namespace kvmmio {
namespace {

const kvm_irq_routing* as_table(const std::vector<uint64_t>& buf) {
  return reinterpret_cast<const kvm_irq_routing*>(buf.data());
}

TEST(GsiRouting, SerializesEveryRouteEveryTime) {
  GsiRouting r;
  r.add_irqchip(5, 0, 5);
  auto first = r.serialize();
  ASSERT_EQ(as_table(first)->nr, 1u);
  r.set_msi(40, 0xfee00000, 0x31);
  auto second = r.serialize();
  const kvm_irq_routing* t = as_table(second);
  ASSERT_EQ(t->nr, 2u);  // the earlier route is still there
  EXPECT_EQ(t->entries[0].gsi, 5u);
  EXPECT_EQ(t->entries[0].type, static_cast<uint32_t>(KVM_IRQ_ROUTING_IRQCHIP));
  EXPECT_EQ(t->entries[1].gsi, 40u);
  EXPECT_EQ(t->entries[1].u.msi.address_lo, 0xfee00000u);
  EXPECT_EQ(t->entries[1].u.msi.data, 0x31u);
}

TEST(GsiRouting, DuplicateIrqchipRouteIsOneRouteAndMsiIsReplaced) {
  GsiRouting r;
  r.add_irqchip(3, 0, 3);
  r.add_irqchip(3, 0, 3);
  r.add_irqchip(3, 2, 3);  // x86: the same GSI on PIC and IOAPIC
  EXPECT_EQ(r.size(), 2u);
  r.set_msi(9, 1, 1);
  r.set_msi(9, 2, 2);
  EXPECT_EQ(r.size(), 3u);
  r.remove(3);
  EXPECT_EQ(r.size(), 1u);
  EXPECT_FALSE(r.has(3));
  EXPECT_TRUE(r.has(9));
}

}  // namespace
}  // namespace kvmmio
