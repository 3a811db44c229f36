// SPDX-License-Identifier: BSD-2-Clause
// The GSI routing table and its serialisation to KVM_SET_GSI_ROUTING.
#include "kvmmio/gsi_routing.h"

#include <cstring>

namespace kvmmio {

void GsiRouting::add_irqchip(uint32_t gsi, uint32_t chip, uint32_t pin) {
  auto [first, last] = routes_.equal_range(gsi);
  for (auto it = first; it != last; ++it) {
    const auto& e = it->second;
    if (e.type == KVM_IRQ_ROUTING_IRQCHIP && e.u.irqchip.irqchip == chip && e.u.irqchip.pin == pin)
      return;
  }
  kvm_irq_routing_entry e{};
  e.gsi = gsi;
  e.type = KVM_IRQ_ROUTING_IRQCHIP;
  e.u.irqchip.irqchip = chip;
  e.u.irqchip.pin = pin;
  routes_.emplace(gsi, e);
}

void GsiRouting::set_msi(uint32_t gsi, uint64_t address, uint32_t data) {
  auto [first, last] = routes_.equal_range(gsi);
  for (auto it = first; it != last;) {
    it = it->second.type == KVM_IRQ_ROUTING_MSI ? routes_.erase(it) : std::next(it);
  }
  kvm_irq_routing_entry e{};
  e.gsi = gsi;
  e.type = KVM_IRQ_ROUTING_MSI;
  e.u.msi.address_lo = static_cast<uint32_t>(address);
  e.u.msi.address_hi = static_cast<uint32_t>(address >> 32);
  e.u.msi.data = data;
  routes_.emplace(gsi, e);
}

void GsiRouting::remove(uint32_t gsi) { routes_.erase(gsi); }

size_t GsiRouting::size() const { return routes_.size(); }

std::vector<uint64_t> GsiRouting::serialize() const {
  const size_t bytes = sizeof(kvm_irq_routing) + routes_.size() * sizeof(kvm_irq_routing_entry);
  std::vector<uint64_t> buf((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
  auto* table = reinterpret_cast<kvm_irq_routing*>(buf.data());
  table->nr = static_cast<uint32_t>(routes_.size());
  size_t i = 0;
  for (const auto& [gsi, entry] : routes_) table->entries[i++] = entry;
  return buf;
}

}  // namespace kvmmio
