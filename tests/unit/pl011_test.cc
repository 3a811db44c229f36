// SPDX-License-Identifier: BSD-2-Clause
// The PL011 model driven as Linux's amba-pl011 driver and earlycon drive
// it: flags, TX to the sink, the RX FIFO with its trigger level, interrupt
// status and the level line, the ID registers, guest errors.
#include "kvmmio/console/pl011.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace kvmmio::console {
namespace {

class Pl011Test : public testing::Test {
 protected:
  Pl011 uart{[this](uint8_t b) { sent += static_cast<char>(b); },
             [this](bool level) { line_changes.push_back(level); }};
  std::string sent;
  std::vector<bool> line_changes;

  uint32_t read(uint64_t off, size_t size = 4) {
    uint8_t buf[4] = {};
    uart.mmio_read(off, {buf, size});
    uint32_t v = 0;
    std::memcpy(&v, buf, size);
    return v;
  }
  void write(uint64_t off, uint32_t v, size_t size = 4) {
    uint8_t buf[4];
    std::memcpy(buf, &v, 4);
    uart.mmio_write(off, {buf, size});
  }
  size_t receive(const std::string& s) {
    return uart.receive({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  }
  bool line() const { return !line_changes.empty() && line_changes.back(); }
};

TEST_F(Pl011Test, ResetFlagsSayTransmitterReadyAndNothingReceived) {
  const uint32_t fr = read(Pl011::kFR);
  EXPECT_TRUE(fr & Pl011::kFrTxFifoEmpty);
  EXPECT_TRUE(fr & Pl011::kFrRxFifoEmpty);
  EXPECT_FALSE(fr & Pl011::kFrTxFifoFull);
  EXPECT_FALSE(fr & Pl011::kFrRxFifoFull);
  EXPECT_EQ(read(Pl011::kCR), 0x300u);
  EXPECT_EQ(read(Pl011::kIFLS), 0x12u);
  EXPECT_EQ(read(Pl011::kRIS), 0u);
}

TEST_F(Pl011Test, BytesWrittenToDrGoToTheSink) {
  for (char c : std::string("hi\n"))
    write(Pl011::kDR, static_cast<uint8_t>(c), 1);  // earlycon: writeb
  write(Pl011::kDR, 'x', 2);                        // amba-pl011: writew
  EXPECT_EQ(sent, "hi\nx");
  EXPECT_EQ(uart.counters().tx_bytes, 4u);
  EXPECT_TRUE(read(Pl011::kFR) & Pl011::kFrTxFifoEmpty);
  EXPECT_TRUE(read(Pl011::kRIS) & Pl011::kIntTx);
}

TEST_F(Pl011Test, IdRegistersIdentifyAPl011PrimeCell) {
  uint32_t periph = 0, cell = 0;
  for (int i = 0; i < 4; ++i) {
    periph |= (read(Pl011::kPeriphID0 + 4 * i) & 0xff) << (8 * i);
    cell |= (read(Pl011::kCellID0 + 4 * i) & 0xff) << (8 * i);
  }
  EXPECT_EQ(periph & 0x000fffff, 0x00041011u);  // amba-pl011's ARM id/mask
  EXPECT_EQ(cell, 0xb105f00du);                 // AMBA_CID
}

TEST_F(Pl011Test, WithoutFifoOnlyOneByteIsHeld) {
  EXPECT_EQ(receive("abc"), 1u);
  EXPECT_TRUE(read(Pl011::kFR) & Pl011::kFrRxFifoFull);
  EXPECT_EQ(read(Pl011::kDR), 'a');
  EXPECT_TRUE(read(Pl011::kFR) & Pl011::kFrRxFifoEmpty);
}

TEST_F(Pl011Test, FifoHolds32BytesInOrderAndRefusesTheRest) {
  write(Pl011::kLCR_H, Pl011::kLcrFifoEnable | 0x60);  // 8N1, FIFOs on
  std::string in;
  for (int i = 0; i < 40; ++i) in += static_cast<char>('A' + i % 26);
  EXPECT_EQ(receive(in), 32u);
  EXPECT_TRUE(read(Pl011::kFR) & Pl011::kFrRxFifoFull);
  std::string out;
  while (!(read(Pl011::kFR) & Pl011::kFrRxFifoEmpty)) out += static_cast<char>(read(Pl011::kDR, 2));
  EXPECT_EQ(out, in.substr(0, 32));
  EXPECT_EQ(uart.counters().rx_bytes, 32u);
  EXPECT_EQ(read(Pl011::kDR), 0u);  // empty FIFO reads as 0
}

TEST_F(Pl011Test, ReceiveInterruptsFollowTriggerLevelAndTimeout) {
  write(Pl011::kLCR_H, Pl011::kLcrFifoEnable);
  write(Pl011::kIMSC, Pl011::kIntRx | Pl011::kIntRxTimeout);  // what Linux unmasks
  EXPECT_TRUE(line_changes.empty());

  receive("x");  // below the 1/2 trigger level (16): only the timeout
  EXPECT_EQ(read(Pl011::kRIS) & (Pl011::kIntRx | Pl011::kIntRxTimeout), Pl011::kIntRxTimeout);
  EXPECT_EQ(read(Pl011::kMIS), Pl011::kIntRxTimeout);
  EXPECT_TRUE(line());
  read(Pl011::kDR);
  EXPECT_EQ(read(Pl011::kRIS) & Pl011::kIntRxTimeout, 0u);
  EXPECT_FALSE(line());

  receive(std::string(16, 'y'));
  EXPECT_TRUE(read(Pl011::kRIS) & Pl011::kIntRx);
  for (int i = 0; i < 10; ++i) read(Pl011::kDR);
  EXPECT_FALSE(read(Pl011::kRIS) & Pl011::kIntRx);  // below the level again
  EXPECT_TRUE(read(Pl011::kRIS) & Pl011::kIntRxTimeout);
  EXPECT_TRUE(line());

  // ICR clears; the line drops; the level only changes on transitions.
  write(Pl011::kICR, Pl011::kIntAll);
  EXPECT_EQ(read(Pl011::kMIS), 0u);
  EXPECT_FALSE(line());
  EXPECT_EQ(line_changes, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(uart.counters().interrupts, 2u);
}

TEST_F(Pl011Test, TransmitInterruptWhenUnmasked) {
  write(Pl011::kDR, 'a');
  EXPECT_FALSE(line());  // TX status is set but masked
  write(Pl011::kIMSC, Pl011::kIntTx);
  EXPECT_TRUE(line());
  write(Pl011::kICR, Pl011::kIntTx);
  EXPECT_FALSE(line());
  write(Pl011::kDR, 'b');
  EXPECT_TRUE(line());
  write(Pl011::kIMSC, 0);
  EXPECT_FALSE(line());
}

TEST_F(Pl011Test, TriggerLevelFollowsIfls) {
  write(Pl011::kLCR_H, Pl011::kLcrFifoEnable);
  write(Pl011::kIFLS, 0);  // RX at 1/8: 4 bytes
  receive("abc");
  EXPECT_FALSE(read(Pl011::kRIS) & Pl011::kIntRx);
  receive("d");
  EXPECT_TRUE(read(Pl011::kRIS) & Pl011::kIntRx);
}

TEST_F(Pl011Test, GuestReadingMakesRoomAndCallsBackOnce) {
  int calls = 0;
  uart.set_rx_space_callback([&] { ++calls; });
  write(Pl011::kLCR_H, Pl011::kLcrFifoEnable);
  receive(std::string(32, 'z'));
  read(Pl011::kDR);
  EXPECT_EQ(calls, 0);           // nobody was refused yet
  receive(std::string(5, 'z'));  // 1 fits, 4 refused
  read(Pl011::kDR);
  read(Pl011::kDR);
  EXPECT_EQ(calls, 1);
}

// The machine's reset on a reboot in place: the registers and FIFO as at
// power-on, the line lowered, input refused before asked for again.
TEST_F(Pl011Test, ResetReturnsToPowerOnAndAsksForRefusedInput) {
  int calls = 0;
  uart.set_rx_space_callback([&] { ++calls; });
  write(Pl011::kLCR_H, Pl011::kLcrFifoEnable);
  write(Pl011::kIBRD, 13);
  write(Pl011::kIFLS, 0);
  write(Pl011::kIMSC, Pl011::kIntRx);
  receive(std::string(40, 'z'));  // 32 fit, 8 refused
  ASSERT_TRUE(line());
  uart.reset();
  EXPECT_FALSE(line());
  EXPECT_EQ(calls, 1) << "the refused input is asked for again";
  EXPECT_TRUE(read(Pl011::kFR) & Pl011::kFrRxFifoEmpty);
  EXPECT_EQ(read(Pl011::kCR), 0x300u);
  EXPECT_EQ(read(Pl011::kIFLS), 0x12u);
  EXPECT_EQ(read(Pl011::kLCR_H), 0u);
  EXPECT_EQ(read(Pl011::kIBRD), 0u);
  EXPECT_EQ(read(Pl011::kIMSC), 0u);
  EXPECT_EQ(read(Pl011::kRIS), 0u);
  EXPECT_EQ(uart.counters().rx_bytes, 32u) << "counters go on across a reset";
  uart.reset();
  EXPECT_EQ(calls, 1) << "nothing was refused since";
}

TEST_F(Pl011Test, ProgrammingRegistersReadBack) {
  write(Pl011::kIBRD, 13);
  write(Pl011::kFBRD, 1);
  write(Pl011::kLCR_H, 0x70);
  write(Pl011::kCR, 0x301);
  write(Pl011::kDMACR, 0);
  EXPECT_EQ(read(Pl011::kIBRD), 13u);
  EXPECT_EQ(read(Pl011::kFBRD), 1u);
  EXPECT_EQ(read(Pl011::kLCR_H), 0x70u);
  EXPECT_EQ(read(Pl011::kCR, 2), 0x301u);
  EXPECT_EQ(uart.counters().guest_errors, 0u);
}

TEST_F(Pl011Test, GuestMistakesAreCountedNotFatal) {
  EXPECT_EQ(read(0x100), 0u);   // reserved
  write(Pl011::kFR, 0);         // read-only
  write(Pl011::kPeriphID0, 1);  // read-only ID
  read(Pl011::kDR + 1, 1);      // misaligned
  uint8_t eight[8] = {};
  uart.mmio_read(Pl011::kDR, eight);  // 8-byte access
  read(Pl011::kICR);                  // write-only
  EXPECT_EQ(uart.counters().guest_errors, 6u);
  EXPECT_EQ(sent, "");
}

}  // namespace
}  // namespace kvmmio::console
