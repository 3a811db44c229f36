// SPDX-License-Identifier: BSD-2-Clause
// GsiRouting: the VM's whole GSI routing table.
//
// KVM_SET_GSI_ROUTING replaces the table, so adding one route means sending
// all of them again: this class owns the table and builds the complete
// kvm_irq_routing payload on every commit (Vm::commit_routing()).
#pragma once

#include <linux/kvm.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "kvmmio/base/export.h"

namespace kvmmio {

class KVMMIO_EXPORT GsiRouting {
 public:
  // Route `gsi` to pin `pin` of in-kernel irqchip `chip` (arm64: chip 0, pin
  // = SPI number; x86: PIC master 0 / slave 1 / IOAPIC 2). A GSI may have
  // several irqchip routes (x86 PIC + IOAPIC); the same (chip, pin) twice is
  // one route.
  void add_irqchip(uint32_t gsi, uint32_t chip, uint32_t pin);
  // Route `gsi` to an MSI (replaces any earlier MSI route of that GSI).
  void set_msi(uint32_t gsi, uint64_t address, uint32_t data);
  // Removes every route of `gsi`.
  void remove(uint32_t gsi);

  size_t size() const;
  bool has(uint32_t gsi) const { return routes_.count(gsi) != 0; }

  // The full table in KVM's layout: a kvm_irq_routing header followed by
  // its entries, in a buffer of suitable alignment.
  std::vector<uint64_t> serialize() const;

 private:
  std::multimap<uint32_t, kvm_irq_routing_entry> routes_;
};

}  // namespace kvmmio
