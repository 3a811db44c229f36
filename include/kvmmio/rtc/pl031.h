// SPDX-License-Identifier: BSD-2-Clause
// Pl031: an ARM PrimeCell PL031 real-time clock (ARM DDI 0224) as an
// MmioDevice: a 32-bit count of seconds that Linux's rtc-pl031 driver
// reads as seconds since the epoch, so a guest's clock starts at the
// host's time rather than in 1970.
//
// - RTCDR (0x000) reads the counter: the host clock's seconds plus an
//   offset, 0 at first, so the counter starts at the host's time.
// - RTCLR (0x008) loads the counter: the offset becomes the value minus
//   the host's seconds, and the counter runs on from there. A read returns
//   the value last loaded. Nothing reaches the host's clock.
// - RTCCR (0x00c) reads 1: the counter always runs (the PL031's start bit
//   cannot be cleared once set, and this one is set from reset); writes
//   are accepted and change nothing.
// - The match alarm (RTCMR 0x004): when the counter reaches the match
//   value, RTCRIS (0x014) latches; RTCIMSC (0x010) unmasks it, RTCMIS
//   (0x018) is RIS & IMSC, a write of 1 to RTCICR (0x01c) clears it.
//   RTCINTR (MIS != 0) is handed to `irq_line` as a level, on change only
//   (as the PL061's, declared level-high in the device tree). The device
//   keeps no timer of its own: it asks its owner's `alarm_timer` to call
//   alarm_due() once the clock reads a given second, and re-checks there.
//   As QEMU's model does, a match value at or before the counter (within
//   2^31 seconds) latches RIS at once when RTCMR or RTCLR is written;
//   Linux never sets an alarm in the past.
// - The peripheral and PrimeCell ID registers (0xfe0-0xffc) identify it
//   to the AMBA bus, which reads them before the driver binds.
// Registers are 32 bits wide and Linux uses readl/writel: any access not
// 4 bytes at a register's start, reserved offsets, writes to read-only
// registers and reads of RTCICR are counted guest errors: reads return 0,
// writes are ignored.
//
// Thread-safe: vCPU threads access registers while the owner's timer
// thread calls alarm_due().
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>

#include "kvmmio/amba/primecell.h"
#include "kvmmio/base/counters.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/mmio_bus.h"

namespace kvmmio::rtc {

class KVMMIO_EXPORT Pl031 : public MmioDevice {
 public:
  // Register offsets (ARM DDI 0224, table 3-1).
  static constexpr uint64_t kDR = 0x000;
  static constexpr uint64_t kMR = 0x004;
  static constexpr uint64_t kLR = 0x008;
  static constexpr uint64_t kCR = 0x00c;
  static constexpr uint64_t kIMSC = 0x010;
  static constexpr uint64_t kRIS = 0x014;
  static constexpr uint64_t kMIS = 0x018;
  static constexpr uint64_t kICR = 0x01c;
  static constexpr uint64_t kPeriphID0 = amba::kPeriphID0;  // ..0xfec
  static constexpr uint64_t kCellID0 = amba::kCellID0;      // ..0xffc
  static constexpr uint64_t kSize = 0x1000;

  // PeriphID 0x00041031 (what Linux's amba_id table matches).
  static constexpr uint8_t kPeriphId[4] = {0x31, 0x10, 0x04, 0x00};

  // Whole seconds since the epoch; the default reads the host's
  // CLOCK_REALTIME. Tests inject their own.
  using Clock = std::function<int64_t()>;
  static int64_t host_realtime_seconds();
  // RTCINTR, a level: called on change only.
  using IrqLine = std::function<void(bool level)>;
  // The owner's one-shot timer: alarm_timer(at) asks for one alarm_due()
  // call once `clock` reads `at` or later, replacing any earlier request;
  // alarm_timer(std::nullopt) cancels. Called with the device's lock held:
  // it must not call back into the device.
  using AlarmTimer = std::function<void(std::optional<int64_t> at)>;

  Pl031(IrqLine irq_line, AlarmTimer alarm_timer, Clock clock = host_realtime_seconds);

  // The alarm timer's callback: latches RIS if the counter reached the
  // match value, asks for the timer again if not yet (the clock went back).
  void alarm_due();

  // The machine's reset (a guest reboot in place): the counter back to
  // the clock's time (no offset), match, mask and interrupt cleared, an
  // armed alarm cancelled, the line lowered. Counters are kept.
  void reset();

  void mmio_read(uint64_t offset, std::span<uint8_t> data) override;
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override;

#define KVMMIO_PL031_COUNTERS(C)                                                      \
  C(loads, "counter loads through RTCLR: the guest set its real-time clock")        \
  C(alarms, "match interrupts latched: the counter reached RTCMR")                  \
  C(guest_errors, "guest mistakes: reserved offsets, read-only registers, access widths")
  struct Counters {
    KVMMIO_PL031_COUNTERS(KVMMIO_PLAIN_COUNTER)
    KVMMIO_COUNTER_TABLE(KVMMIO_PL031_COUNTERS)
  };
  Counters counters() const;

 private:
  uint32_t count_at(int64_t now) const;          // under mutex_
  uint32_t read_register(uint64_t offset);       // under mutex_
  void write_register(uint64_t offset, uint32_t value);  // under mutex_
  void schedule_match();                         // under mutex_
  void update_irq();                             // under mutex_

  IrqLine irq_line_;
  AlarmTimer alarm_timer_;
  Clock clock_;
  mutable std::mutex mutex_;
  int64_t offset_ = 0;  // the counter less the clock's seconds (the counter: the low 32 bits)
  uint32_t loaded_ = 0, match_ = 0, imsc_ = 0;
  bool ris_ = false;
  bool armed_ = false;  // the timer was asked for the match
  bool line_ = false;
  Counters counters_;
  GuestErrorLog errors_{"pl031"};
};

}  // namespace kvmmio::rtc
