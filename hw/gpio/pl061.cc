// SPDX-License-Identifier: BSD-2-Clause
// The PL061 GPIO model (see kvmmio/gpio/pl061.h).
#include "kvmmio/gpio/pl061.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace kvmmio::gpio {

Pl061::Pl061(IrqLine irq_line) : irq_line_(std::move(irq_line)) {}

uint8_t Pl061::pins() const { return static_cast<uint8_t>((out_ & dir_) | (in_ & ~dir_)); }

// Edges are seen on the pins as they are, outputs included: a driver may
// loop an output back, and the PL061 samples the pad either way.
void Pl061::pins_changed(uint8_t before) {
  const uint8_t now = pins();
  const uint8_t changed = before ^ now;
  const uint8_t edge_pins = static_cast<uint8_t>(~is_);
  const uint8_t rising = changed & now, falling = changed & before;
  const uint8_t wanted = static_cast<uint8_t>((ibe_ & changed) |
                                              (~ibe_ & ((iev_ & rising) | (~iev_ & falling))));
  edges_ |= wanted & edge_pins;
  update_levels();
}

void Pl061::update_levels() {
  // A level pin interrupts while it is at the level GPIOIEV names.
  const uint8_t at_level = static_cast<uint8_t>(~(pins() ^ iev_));
  levels_ = at_level & is_;
  update_irq();
}

void Pl061::update_irq() {
  const bool level = ((edges_ | levels_) & ie_) != 0;
  if (level == line_) return;
  line_ = level;
  if (level) ++counters_.interrupts;
  if (irq_line_) irq_line_(level);
}

void Pl061::reset() {
  std::lock_guard lock(mutex_);
  out_ = in_ = dir_ = is_ = ibe_ = iev_ = ie_ = afsel_ = 0;
  edges_ = levels_ = 0;
  update_irq();
}

void Pl061::set_input(unsigned pin, bool level) {
  if (pin >= kPins) throw std::out_of_range("PL061 pin " + std::to_string(pin));
  std::lock_guard lock(mutex_);
  const uint8_t before = pins();
  const uint8_t bit = static_cast<uint8_t>(1u << pin);
  const uint8_t in = level ? (in_ | bit) : (in_ & ~bit);
  if (in == in_) return;
  in_ = in;
  ++counters_.input_changes;
  pins_changed(before);
}

uint32_t Pl061::read_register(uint64_t offset) {
  if (offset < kDataEnd) return pins() & ((offset >> 2) & 0xff);
  if (const auto id = amba::id_register(offset, kPeriphId)) return *id;
  switch (offset) {
    case kDir: return dir_;
    case kIS: return is_;
    case kIBE: return ibe_;
    case kIEV: return iev_;
    case kIE: return ie_;
    case kRIS: return edges_ | levels_;
    case kMIS: return (edges_ | levels_) & ie_;
    case kAFSEL: return afsel_;
    case kIC: errors_.report("read of write-only GPIOIC"); return 0;
    default:
      errors_.report("read of reserved offset 0x%llx", static_cast<unsigned long long>(offset));
      return 0;
  }
}

void Pl061::write_register(uint64_t offset, uint8_t value) {
  const uint8_t before = pins();
  if (offset < kDataEnd) {
    const uint8_t mask = static_cast<uint8_t>(offset >> 2);
    out_ = static_cast<uint8_t>((out_ & ~mask) | (value & mask));
    return pins_changed(before);
  }
  switch (offset) {
    case kDir: dir_ = value; return pins_changed(before);
    // A change of sense or event re-evaluates the levels; latched edges stay
    // until GPIOIC, as on hardware.
    case kIS: is_ = value; return update_levels();
    case kIBE: ibe_ = value; return;
    case kIEV: iev_ = value; return update_levels();
    case kIE: ie_ = value; return update_irq();
    case kIC: edges_ &= static_cast<uint8_t>(~value); return update_irq();
    case kAFSEL: afsel_ = value; return;
    case kRIS:
    case kMIS:
      return amba::report_unwritable(errors_, offset, true);
    default:
      return amba::report_unwritable(errors_, offset, false);
  }
}

// Registers are 8 bits wide in 32-bit words; Linux's driver uses byte
// accesses (readb/writeb), so 1, 2 and 4 bytes at a word's start are all
// the guest's to use.
void Pl061::mmio_read(uint64_t offset, std::span<uint8_t> data) {
  std::fill(data.begin(), data.end(), 0);
  if (offset % 4 != 0 || data.size() > 4 || data.size() == 3 || offset >= kSize) {
    errors_.report("%zu-byte read at offset 0x%llx (registers are at word starts, 1-4 bytes)",
                   data.size(), static_cast<unsigned long long>(offset));
    return;
  }
  std::lock_guard lock(mutex_);
  const uint32_t v = read_register(offset);
  std::memcpy(data.data(), &v, std::min(data.size(), sizeof v));  // little-endian: the low bytes
}

void Pl061::mmio_write(uint64_t offset, std::span<const uint8_t> data) {
  if (offset % 4 != 0 || data.size() > 4 || data.size() == 3 || data.empty() || offset >= kSize) {
    errors_.report("%zu-byte write at offset 0x%llx (registers are at word starts, 1-4 bytes)",
                   data.size(), static_cast<unsigned long long>(offset));
    return;
  }
  std::lock_guard lock(mutex_);
  write_register(offset, data[0]);  // bits 31:8 are reserved: ignored
}

Pl061::Counters Pl061::counters() const {
  std::lock_guard lock(mutex_);
  Counters c = counters_;
  c.guest_errors = errors_.count();
  return c;
}

}  // namespace kvmmio::gpio
