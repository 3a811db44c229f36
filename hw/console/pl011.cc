// SPDX-License-Identifier: BSD-2-Clause
// The PL011 UART model (see kvmmio/console/pl011.h).
#include "kvmmio/console/pl011.h"

#include <algorithm>
#include <cstring>

namespace kvmmio::console {
namespace {

uint32_t le_value(std::span<const uint8_t> data) {
  uint32_t v = 0;
  std::memcpy(&v, data.data(), std::min<size_t>(data.size(), sizeof v));
  return v;
}

}  // namespace

Pl011::Pl011(TxSink tx, IrqLine irq_line) : tx_(std::move(tx)), irq_line_(std::move(irq_line)) {}

void Pl011::set_rx_space_callback(std::function<void()> callback) {
  std::lock_guard lock(mutex_);
  rx_space_callback_ = std::move(callback);
}

void Pl011::reset() {
  std::function<void()> callback;
  {
    std::lock_guard lock(mutex_);
    fifo_head_ = fifo_count_ = 0;
    ilpr_ = ibrd_ = fbrd_ = lcr_h_ = 0;
    cr_ = 0x300;
    ifls_ = 0x12;
    imsc_ = ris_ = dmacr_ = 0;
    update_irq();
    if (host_waiting_) {
      host_waiting_ = false;
      callback = rx_space_callback_;
    }
  }
  if (callback) callback();  // outside the lock, as after a guest read
}

size_t Pl011::fifo_capacity() const { return (lcr_h_ & kLcrFifoEnable) ? kFifoDepth : 1; }

uint32_t Pl011::rx_trigger_level() const {
  // IFLS bits 5:3: 1/8, 1/4, 1/2, 3/4, 7/8 full.
  static constexpr uint32_t kLevels[] = {4, 8, 16, 24, 28};
  const uint32_t sel = (ifls_ >> 3) & 7;
  return sel < 5 ? kLevels[sel] : 16;
}

void Pl011::update_rx_status() {
  const bool fifo_on = lcr_h_ & kLcrFifoEnable;
  if (fifo_count_ >= (fifo_on ? rx_trigger_level() : 1))
    ris_ |= kIntRx;
  else
    ris_ &= ~kIntRx;
  if (fifo_count_ > 0)
    ris_ |= kIntRxTimeout;
  else
    ris_ &= ~kIntRxTimeout;
}

void Pl011::update_irq() {
  const bool level = (ris_ & imsc_) != 0;
  if (level == line_) return;
  line_ = level;
  if (level) ++counters_.interrupts;
  if (irq_line_) irq_line_(level);
}

size_t Pl011::receive(std::span<const uint8_t> bytes) {
  std::lock_guard lock(mutex_);
  const size_t room = fifo_capacity() > fifo_count_ ? fifo_capacity() - fifo_count_ : 0;
  const size_t n = std::min(room, bytes.size());
  for (size_t i = 0; i < n; ++i) fifo_[(fifo_head_ + fifo_count_++) % kFifoDepth] = bytes[i];
  if (n < bytes.size()) host_waiting_ = true;
  counters_.rx_bytes += n;
  if (n) {
    update_rx_status();
    update_irq();
  }
  return n;
}

uint32_t Pl011::read_register(uint64_t offset, bool* rx_space) {
  if (const auto id = amba::id_register(offset, kPeriphId)) return *id;
  switch (offset) {
    case kDR: {
      // An empty FIFO reads as 0; drivers check FR.RXFE first.
      if (fifo_count_ == 0) return 0;
      const uint8_t byte = fifo_[fifo_head_];
      fifo_head_ = (fifo_head_ + 1) % kFifoDepth;
      --fifo_count_;
      update_rx_status();
      update_irq();
      if (host_waiting_) {
        host_waiting_ = false;
        *rx_space = true;
      }
      return byte;  // error bits 11:8 are always clear
    }
    case kRSR: return 0;
    case kFR: {
      uint32_t fr = kFrTxFifoEmpty;
      if (fifo_count_ == 0) fr |= kFrRxFifoEmpty;
      if (fifo_count_ >= fifo_capacity()) fr |= kFrRxFifoFull;
      return fr;
    }
    case kILPR: return ilpr_;
    case kIBRD: return ibrd_;
    case kFBRD: return fbrd_;
    case kLCR_H: return lcr_h_;
    case kCR: return cr_;
    case kIFLS: return ifls_;
    case kIMSC: return imsc_;
    case kRIS: return ris_;
    case kMIS: return ris_ & imsc_;
    case kDMACR: return dmacr_;
    case kICR: errors_.report("read of write-only ICR"); return 0;
    default:
      errors_.report("read of reserved offset 0x%llx", static_cast<unsigned long long>(offset));
      return 0;
  }
}

void Pl011::write_register(uint64_t offset, uint32_t value) {
  switch (offset) {
    case kRSR: return;  // ECR: clears error flags, of which there are none
    case kILPR: ilpr_ = value & 0xff; return;
    case kIBRD: ibrd_ = value & 0xffff; return;
    case kFBRD: fbrd_ = value & 0x3f; return;
    case kLCR_H:
      lcr_h_ = value & 0xff;
      // Turning the FIFO off leaves a 1-byte holding register: what does not
      // fit is lost, as on hardware (the guest's choice).
      if (fifo_count_ > fifo_capacity()) fifo_count_ = fifo_capacity();
      update_rx_status();
      update_irq();
      return;
    case kCR: cr_ = value & 0xffff; return;
    case kIFLS:
      ifls_ = value & 0x3f;
      update_rx_status();
      update_irq();
      return;
    case kIMSC:
      imsc_ = value & kIntAll;
      update_irq();
      return;
    case kICR:
      ris_ &= ~value;
      update_irq();
      return;
    case kDMACR: dmacr_ = value & 0x7; return;
    case kFR:
    case kRIS:
    case kMIS:
      return amba::report_unwritable(errors_, offset, true);
    default:
      return amba::report_unwritable(errors_, offset, false);
  }
}

void Pl011::mmio_read(uint64_t offset, std::span<uint8_t> data) {
  std::fill(data.begin(), data.end(), 0);
  if (offset % 4 != 0 || data.size() > 4) {
    errors_.report("%zu-byte read at offset 0x%llx (registers are 32-bit, aligned)", data.size(),
                   static_cast<unsigned long long>(offset));
    return;
  }
  bool rx_space = false;
  std::function<void()> callback;
  {
    std::lock_guard lock(mutex_);
    const uint32_t v = read_register(offset, &rx_space);
    std::memcpy(data.data(), &v, data.size());  // little-endian: the low bytes
    if (rx_space) callback = rx_space_callback_;
  }
  if (callback) callback();
}

void Pl011::mmio_write(uint64_t offset, std::span<const uint8_t> data) {
  if (offset % 4 != 0 || data.size() > 4) {
    errors_.report("%zu-byte write at offset 0x%llx (registers are 32-bit, aligned)", data.size(),
                   static_cast<unsigned long long>(offset));
    return;
  }
  const uint32_t value = le_value(data);
  if (offset == kDR) {
    // Out first, then the status: the byte has left by the time the guest
    // sees the transmitter ready again. The sink runs outside the lock, so
    // a slow stdout never holds up input.
    if (tx_) tx_(static_cast<uint8_t>(value));
    std::lock_guard lock(mutex_);
    ++counters_.tx_bytes;
    ris_ |= kIntTx;
    update_irq();
    return;
  }
  std::lock_guard lock(mutex_);
  write_register(offset, value);
}

Pl011::Counters Pl011::counters() const {
  std::lock_guard lock(mutex_);
  Counters c = counters_;
  c.guest_errors = errors_.count();
  return c;
}

}  // namespace kvmmio::console
