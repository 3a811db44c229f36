// SPDX-License-Identifier: BSD-2-Clause
// Pl011: an ARM PrimeCell PL011 UART (ARM DDI 0183) as an MmioDevice: what
// Linux's amba-pl011 driver and its earlycon need, no more.
//
// - TX: a byte written to DR goes straight to the sink; the transmitter is
//   never busy or full (FR.TXFE=1, TXFF=0), and the TX interrupt status is
//   raised after every byte, as a FIFO that drained below its level would.
// - RX: host input (receive()) fills a 32-byte FIFO (1 byte with LCR_H.FEN
//   clear); the guest reads it through DR; FR.RXFE/RXFF report its state.
//   RXRIS follows the IFLS trigger level; RTRIS (receive timeout) is raised
//   as soon as data waits, because host input arrives in whole bursts, so
//   the "no more characters for 32 bit periods" condition holds at once.
// - Interrupts: IMSC, RIS, MIS, ICR; the UARTINTR line (MIS != 0) is handed
//   to `irq_line` as a level, raised and lowered on change only.
//   Level rather than an edge irqfd: UARTINTR is a level signal, the device
//   tree declares it level-high, and with KVM_IRQ_LINE the vGIC re-presents
//   it after EOI for as long as the guest leaves a status bit set; an edge
//   would be lost whenever a handler returns with work still pending.
// - Peripheral and PrimeCell ID registers (0xfe0-0xffc), which the AMBA bus
//   reads to bind the driver.
// Guest mistakes (reserved offsets, writes to read-only registers,
// misaligned or 8-byte accesses) are counted guest errors.
//
// Thread-safe: vCPU threads access registers while the console thread
// delivers input.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <span>

#include "kvmmio/amba/primecell.h"
#include "kvmmio/base/counters.h"
#include "kvmmio/base/export.h"
#include "kvmmio/console/input_sink.h"
#include "kvmmio/base/log.h"
#include "kvmmio/mmio_bus.h"

namespace kvmmio::console {

class KVMMIO_EXPORT Pl011 : public MmioDevice, public ConsoleInputSink {
 public:
  // Register offsets (ARM DDI 0183, table 3-1).
  static constexpr uint64_t kDR = 0x000;
  static constexpr uint64_t kRSR = 0x004;  // write: ECR (error clear)
  static constexpr uint64_t kFR = 0x018;
  static constexpr uint64_t kILPR = 0x020;
  static constexpr uint64_t kIBRD = 0x024;
  static constexpr uint64_t kFBRD = 0x028;
  static constexpr uint64_t kLCR_H = 0x02c;
  static constexpr uint64_t kCR = 0x030;
  static constexpr uint64_t kIFLS = 0x034;
  static constexpr uint64_t kIMSC = 0x038;
  static constexpr uint64_t kRIS = 0x03c;
  static constexpr uint64_t kMIS = 0x040;
  static constexpr uint64_t kICR = 0x044;
  static constexpr uint64_t kDMACR = 0x048;
  static constexpr uint64_t kPeriphID0 = amba::kPeriphID0;  // ..0xfec: PeriphID0-3
  static constexpr uint64_t kCellID0 = amba::kCellID0;      // ..0xffc: PCellID0-3
  static constexpr uint64_t kSize = 0x1000;

  // FR bits.
  static constexpr uint32_t kFrRxFifoEmpty = 1u << 4;
  static constexpr uint32_t kFrTxFifoFull = 1u << 5;
  static constexpr uint32_t kFrRxFifoFull = 1u << 6;
  static constexpr uint32_t kFrTxFifoEmpty = 1u << 7;
  // Interrupt bits (IMSC, RIS, MIS, ICR).
  static constexpr uint32_t kIntRx = 1u << 4;
  static constexpr uint32_t kIntTx = 1u << 5;
  static constexpr uint32_t kIntRxTimeout = 1u << 6;
  static constexpr uint32_t kIntAll = 0x7ff;
  // LCR_H bit 4: FIFOs enabled.
  static constexpr uint32_t kLcrFifoEnable = 1u << 4;

  static constexpr size_t kFifoDepth = 32;

  // PeriphID bytes: PL011 revision r1p5 (PeriphID 0x00141011).
  static constexpr uint8_t kPeriphId[4] = {0x11, 0x10, 0x14, 0x00};

  using TxSink = std::function<void(uint8_t)>;
  using IrqLine = std::function<void(bool level)>;

  Pl011(TxSink tx, IrqLine irq_line);

  void mmio_read(uint64_t offset, std::span<uint8_t> data) override;
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override;

  // Host input for the guest: queues as many bytes as the FIFO has room
  // for and returns that count (the rest waits at the caller: no drops).
  size_t receive(std::span<const uint8_t> bytes) override;
  // Called, outside the device's lock, when the guest makes room in a FIFO
  // that earlier refused input.
  void set_rx_space_callback(std::function<void()> callback) override;

  // The machine's reset (a guest reboot in place): every register and the
  // receive FIFO back to their power-on values, the line lowered. Input
  // refused earlier is asked for again (the rx-space callback), since the
  // FIFO is now empty. Counters are kept.
  void reset();

  // A snapshot: the model counts under its own lock.
#define KVMMIO_PL011_COUNTERS(C)                                                           \
  C(tx_bytes, "bytes the guest wrote to DR")                                              \
  C(rx_bytes, "host input bytes queued in the receive FIFO")                              \
  C(interrupts, "rising edges of UARTINTR, the UART's level interrupt line")              \
  C(guest_errors, "guest mistakes: reserved offsets, read-only registers, access widths")
  struct Counters {
    KVMMIO_PL011_COUNTERS(KVMMIO_PLAIN_COUNTER)
    KVMMIO_COUNTER_TABLE(KVMMIO_PL011_COUNTERS)
  };
  Counters counters() const;

 private:
  uint32_t read_register(uint64_t offset, bool* rx_space);  // under mutex_
  void write_register(uint64_t offset, uint32_t value);     // under mutex_
  size_t fifo_capacity() const;
  uint32_t rx_trigger_level() const;
  void update_rx_status();
  void update_irq();

  TxSink tx_;
  IrqLine irq_line_;
  std::function<void()> rx_space_callback_;

  mutable std::mutex mutex_;
  uint8_t fifo_[kFifoDepth] = {};
  size_t fifo_head_ = 0;
  size_t fifo_count_ = 0;
  bool host_waiting_ = false;  // receive() refused bytes since the last pop
  uint32_t ilpr_ = 0, ibrd_ = 0, fbrd_ = 0, lcr_h_ = 0;
  uint32_t cr_ = 0x300;   // reset: TXE | RXE
  uint32_t ifls_ = 0x12;  // reset: both trigger levels at 1/2
  uint32_t imsc_ = 0, ris_ = 0, dmacr_ = 0;
  bool line_ = false;
  Counters counters_;
  GuestErrorLog errors_{"pl011"};
};

}  // namespace kvmmio::console
