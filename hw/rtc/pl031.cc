// SPDX-License-Identifier: BSD-2-Clause
// The PL031 real-time clock model (see kvmmio/rtc/pl031.h).
#include "kvmmio/rtc/pl031.h"

#include <time.h>

#include <algorithm>
#include <cstring>

namespace kvmmio::rtc {

int64_t Pl031::host_realtime_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec;
}

Pl031::Pl031(IrqLine irq_line, AlarmTimer alarm_timer, Clock clock)
    : irq_line_(std::move(irq_line)),
      alarm_timer_(std::move(alarm_timer)),
      clock_(std::move(clock)) {}

// The counter is 32 bits and wraps, as the PL031's does (in 2106).
uint32_t Pl031::count_at(int64_t now) const { return static_cast<uint32_t>(now + offset_); }

// The seconds until the counter reads the match value, as a signed 32-bit
// distance: QEMU's rule, so a match up to 2^31 s behind the counter counts
// as reached rather than 136 years ahead.
void Pl031::schedule_match() {
  const int64_t now = clock_();
  const int32_t ticks = static_cast<int32_t>(match_ - count_at(now));
  if (ticks <= 0) {
    if (armed_ && alarm_timer_) alarm_timer_(std::nullopt);
    armed_ = false;
    if (!ris_) ++counters_.alarms;
    ris_ = true;
    return update_irq();
  }
  armed_ = true;
  if (alarm_timer_) alarm_timer_(now + ticks);
}

void Pl031::reset() {
  std::lock_guard lock(mutex_);
  if (armed_ && alarm_timer_) alarm_timer_(std::nullopt);
  armed_ = false;
  offset_ = 0;
  loaded_ = match_ = imsc_ = 0;
  ris_ = false;
  update_irq();
}

void Pl031::alarm_due() {
  std::lock_guard lock(mutex_);
  if (armed_) schedule_match();
}

void Pl031::update_irq() {
  const bool level = ris_ && imsc_ != 0;
  if (level == line_) return;
  line_ = level;
  if (irq_line_) irq_line_(level);
}

uint32_t Pl031::read_register(uint64_t offset) {
  if (const auto id = amba::id_register(offset, kPeriphId)) return *id;
  switch (offset) {
    case kDR: return count_at(clock_());
    case kMR: return match_;
    case kLR: return loaded_;
    case kCR: return 1;
    case kIMSC: return imsc_;
    case kRIS: return ris_ ? 1 : 0;
    case kMIS: return ris_ && imsc_ != 0 ? 1 : 0;
    case kICR: errors_.report("read of write-only RTCICR"); return 0;
    default:
      errors_.report("read of reserved offset 0x%llx", static_cast<unsigned long long>(offset));
      return 0;
  }
}

void Pl031::write_register(uint64_t offset, uint32_t value) {
  switch (offset) {
    case kMR: match_ = value; return schedule_match();
    case kLR:
      // The counter runs on from the value loaded; only seconds from now on
      // count, so the offset is taken against the clock as it reads now.
      loaded_ = value;
      offset_ = static_cast<int64_t>(value) - clock_();
      ++counters_.loads;
      return schedule_match();
    case kCR: return;       // the start bit is set and stays set
    case kIMSC: imsc_ = value & 1; return update_irq();
    case kICR:
      if (value & 1) ris_ = false;
      return update_irq();
    case kDR:
    case kRIS:
    case kMIS:
      return amba::report_unwritable(errors_, offset, true);
    default:
      return amba::report_unwritable(errors_, offset, false);
  }
}

void Pl031::mmio_read(uint64_t offset, std::span<uint8_t> data) {
  std::fill(data.begin(), data.end(), 0);
  if (offset % 4 != 0 || data.size() != 4 || offset >= kSize) {
    errors_.report("%zu-byte read at offset 0x%llx (registers are 4 bytes at word starts)",
                   data.size(), static_cast<unsigned long long>(offset));
    return;
  }
  std::lock_guard lock(mutex_);
  const uint32_t v = read_register(offset);
  std::memcpy(data.data(), &v, sizeof v);  // little-endian, as the guest's
}

void Pl031::mmio_write(uint64_t offset, std::span<const uint8_t> data) {
  if (offset % 4 != 0 || data.size() != 4 || offset >= kSize) {
    errors_.report("%zu-byte write at offset 0x%llx (registers are 4 bytes at word starts)",
                   data.size(), static_cast<unsigned long long>(offset));
    return;
  }
  uint32_t v;
  std::memcpy(&v, data.data(), sizeof v);
  std::lock_guard lock(mutex_);
  write_register(offset, v);
}

Pl031::Counters Pl031::counters() const {
  std::lock_guard lock(mutex_);
  Counters c = counters_;
  c.guest_errors = errors_.count();
  return c;
}

}  // namespace kvmmio::rtc
