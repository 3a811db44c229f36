// SPDX-License-Identifier: BSD-2-Clause
// Pl061: an ARM PrimeCell PL061 GPIO controller (ARM DDI 0190) as an
// MmioDevice: eight pins, what Linux's gpio-pl061 driver and gpio-keys on
// top of it need. kvmmio wires one pin as the guest's power key (QEMU's
// virt machine does the same), so a clean shutdown can be asked for.
//
// - GPIODATA (0x000-0x3fc): address bits 9:2 mask the access: a read
//   returns the pins under the mask (others 0), a write changes only the
//   output latches under the mask. A pin reads its output latch when
//   GPIODIR makes it an output, the host's input (set_input()) otherwise.
// - Interrupts per pin: GPIOIS (1: level, 0: edge), GPIOIBE (both edges),
//   GPIOIEV (1: rising edge / high level), GPIOIE (unmask). GPIORIS holds
//   latched edges and current levels; GPIOMIS = RIS & IE; GPIOIC clears
//   latched edges (a level stays while it holds). GPIOINTR (MIS != 0) is
//   handed to `irq_line` as a level, on change only (as the PL011's,
//   through KVM_IRQ_LINE, declared level-high in the device tree).
// - GPIOAFSEL is stored (no alternate function exists); the peripheral
//   and PrimeCell ID registers (0xfe0-0xffc) identify it to the AMBA bus.
// Guest mistakes (reserved offsets, writes to read-only registers, reads
// of GPIOIC, accesses not 1, 2 or 4 bytes at a register's start) are
// counted guest errors: reads return 0, writes are ignored.
//
// Thread-safe: vCPU threads access registers while the control thread
// presses the key.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <span>

#include "kvmmio/amba/primecell.h"
#include "kvmmio/base/counters.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/mmio_bus.h"

namespace kvmmio::gpio {

class KVMMIO_EXPORT Pl061 : public MmioDevice {
 public:
  // Register offsets (ARM DDI 0190, table 3-1).
  static constexpr uint64_t kData = 0x000;  // ..0x3fc, address-masked
  static constexpr uint64_t kDataEnd = 0x400;
  static constexpr uint64_t kDir = 0x400;
  static constexpr uint64_t kIS = 0x404;
  static constexpr uint64_t kIBE = 0x408;
  static constexpr uint64_t kIEV = 0x40c;
  static constexpr uint64_t kIE = 0x410;
  static constexpr uint64_t kRIS = 0x414;
  static constexpr uint64_t kMIS = 0x418;
  static constexpr uint64_t kIC = 0x41c;
  static constexpr uint64_t kAFSEL = 0x420;
  static constexpr uint64_t kPeriphID0 = amba::kPeriphID0;  // ..0xfec
  static constexpr uint64_t kCellID0 = amba::kCellID0;      // ..0xffc
  static constexpr uint64_t kSize = 0x1000;
  static constexpr unsigned kPins = 8;

  // PeriphID 0x00041061 (what Linux's amba_id table matches).
  static constexpr uint8_t kPeriphId[4] = {0x61, 0x10, 0x04, 0x00};

  using IrqLine = std::function<void(bool level)>;
  explicit Pl061(IrqLine irq_line);

  void mmio_read(uint64_t offset, std::span<uint8_t> data) override;
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override;

  // The host drives input pin `pin` (0-7) to `level`; an edge or level
  // the guest asked for raises the interrupt. std::out_of_range past 7.
  void set_input(unsigned pin, bool level);

  // The machine's reset (a guest reboot in place): every register and
  // host input back to power-on (0: the power key released), latched
  // edges dropped, the line lowered. Counters are kept.
  void reset();

#define KVMMIO_PL061_COUNTERS(C)                                                          \
  C(input_changes, "host changes of an input pin (the power key pressed or released)") \
  C(interrupts, "rising edges of GPIOINTR, the controller's level interrupt line")     \
  C(guest_errors, "guest mistakes: reserved offsets, read-only registers, access widths")
  struct Counters {
    KVMMIO_PL061_COUNTERS(KVMMIO_PLAIN_COUNTER)
    KVMMIO_COUNTER_TABLE(KVMMIO_PL061_COUNTERS)
  };
  Counters counters() const;

 private:
  uint8_t pins() const;                        // under mutex_
  uint32_t read_register(uint64_t offset);     // under mutex_
  void write_register(uint64_t offset, uint8_t value);  // under mutex_
  void pins_changed(uint8_t before);           // under mutex_
  void update_levels();                        // under mutex_
  void update_irq();                           // under mutex_

  IrqLine irq_line_;
  mutable std::mutex mutex_;
  uint8_t out_ = 0, in_ = 0;  // output latches, host inputs
  uint8_t dir_ = 0, is_ = 0, ibe_ = 0, iev_ = 0, ie_ = 0, afsel_ = 0;
  uint8_t edges_ = 0;   // latched edge interrupts (edge pins)
  uint8_t levels_ = 0;  // level interrupts active now (level pins)
  bool line_ = false;
  Counters counters_;
  GuestErrorLog errors_{"pl061"};
};

}  // namespace kvmmio::gpio
