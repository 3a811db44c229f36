// SPDX-License-Identifier: BSD-2-Clause
// The PL061 model driven as Linux's gpio-pl061 driver and gpio-keys drive
// it: GPIODATA's address masking, directions, edge and level interrupts
// with their masking and clearing, the level line, the ID registers, and
// hostile accesses counted as guest errors.
#include "kvmmio/gpio/pl061.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace kvmmio::gpio {
namespace {

class Pl061Test : public testing::Test {
 protected:
  Pl061 gpio{[this](bool level) { line_changes.push_back(level); }};
  std::vector<bool> line_changes;

  uint32_t read(uint64_t off, size_t size = 1) {
    uint8_t buf[8] = {};
    gpio.mmio_read(off, {buf, size});
    uint32_t v = 0;
    std::memcpy(&v, buf, std::min<size_t>(size, 4));
    return v;
  }
  void write(uint64_t off, uint32_t v, size_t size = 1) {
    uint8_t buf[8] = {};
    std::memcpy(buf, &v, 4);
    gpio.mmio_write(off, {buf, size});
  }
  bool line() const { return !line_changes.empty() && line_changes.back(); }
  // GPIODATA's address for the pins in `mask`.
  static uint64_t data(uint8_t mask) { return Pl061::kData + (uint64_t{mask} << 2); }
};

TEST_F(Pl061Test, ResetIsAllInputsNoInterruptsAndTheIdsIdentifyAPl061) {
  for (uint64_t off : {Pl061::kDir, Pl061::kIS, Pl061::kIBE, Pl061::kIEV, Pl061::kIE, Pl061::kRIS,
                       Pl061::kMIS, Pl061::kAFSEL, data(0xff)})
    EXPECT_EQ(read(off), 0u) << std::hex << off;
  uint32_t periph = 0, cell = 0;
  for (int i = 0; i < 4; ++i) {
    periph |= read(Pl061::kPeriphID0 + 4 * i, 4) << (8 * i);
    cell |= read(Pl061::kCellID0 + 4 * i, 4) << (8 * i);
  }
  EXPECT_EQ(periph & 0x000fffff, 0x00041061u) << "Linux's amba_id for pl061";
  EXPECT_EQ(cell, 0xb105f00du);
  EXPECT_TRUE(line_changes.empty());
  EXPECT_EQ(gpio.counters().guest_errors, 0u);
}

// The machine's reset on a reboot in place: every register as at power-on,
// the power key released, the line lowered.
TEST_F(Pl061Test, ResetReleasesThePowerKeyAndLowersTheLine) {
  write(Pl061::kDir, 0x01);
  write(data(0x01), 0x01);
  write(Pl061::kIBE, 0x08);  // both edges, as gpio-keys asks
  write(Pl061::kIE, 0x08);
  gpio.set_input(3, true);  // the power key pressed
  ASSERT_TRUE(line());
  gpio.reset();
  EXPECT_FALSE(line());
  for (uint64_t off : {Pl061::kDir, Pl061::kIS, Pl061::kIBE, Pl061::kIEV, Pl061::kIE, Pl061::kRIS,
                       Pl061::kMIS, Pl061::kAFSEL, data(0xff)})
    EXPECT_EQ(read(off), 0u) << std::hex << off;
  // A release after the reset (the power key's timer) changes nothing.
  gpio.set_input(3, false);
  EXPECT_FALSE(line());
  EXPECT_EQ(read(Pl061::kRIS), 0u);
}

TEST_F(Pl061Test, DataIsMaskedByTheAddressAndOnlyOutputsAreDriven) {
  write(Pl061::kDir, 0x0f);  // pins 0-3 outputs
  write(data(0xff), 0xff);
  EXPECT_EQ(read(data(0xff)), 0x0fu) << "inputs read the host's (low) levels";
  write(data(0x01), 0x00);  // only pin 0 cleared
  EXPECT_EQ(read(data(0xff)), 0x0eu);
  EXPECT_EQ(read(data(0x06)), 0x06u) << "a read sees only the masked pins";
  EXPECT_EQ(read(data(0x00)), 0x00u);
  gpio.set_input(7, true);
  EXPECT_EQ(read(data(0x80)), 0x80u);
  gpio.set_input(0, true);  // an output pin reads its latch, not the input
  EXPECT_EQ(read(data(0x01)), 0x00u);
  EXPECT_THROW(gpio.set_input(8, true), std::out_of_range);
}

// gpio-keys with pl061: both edges unmasked on the key's pin, as the
// driver sets up an IRQ_TYPE_EDGE_BOTH button.
TEST_F(Pl061Test, ThePowerKeyInterruptsOnPressAndRelease) {
  write(Pl061::kIBE, 1 << 3);
  write(Pl061::kIE, 1 << 3);
  gpio.set_input(3, true);
  EXPECT_TRUE(line());
  EXPECT_EQ(read(Pl061::kMIS), 1u << 3);
  EXPECT_EQ(read(data(1 << 3)), 1u << 3) << "the driver reads the pin: pressed";
  write(Pl061::kIC, 1 << 3);
  EXPECT_FALSE(line());
  gpio.set_input(3, false);
  EXPECT_TRUE(line()) << "the release is an edge too";
  write(Pl061::kIC, 1 << 3);
  EXPECT_FALSE(line());
  EXPECT_EQ(gpio.counters().interrupts, 2u);
  EXPECT_EQ(gpio.counters().input_changes, 2u);
}

TEST_F(Pl061Test, ARisingEdgeLatchesUntilClearedAndAFallingOneDoesNot) {
  write(Pl061::kIEV, 1 << 2);  // rising, edge (IS = 0)
  write(Pl061::kIE, 1 << 2);
  gpio.set_input(2, true);
  EXPECT_TRUE(line());
  gpio.set_input(2, false);  // falling: no new event, the latched one stays
  EXPECT_TRUE(line());
  EXPECT_EQ(read(Pl061::kRIS), 1u << 2);
  write(Pl061::kIC, 1 << 2);
  EXPECT_FALSE(line());
  EXPECT_EQ(read(Pl061::kRIS), 0u);
}

TEST_F(Pl061Test, MaskingHidesButKeepsTheRawStatus) {
  write(Pl061::kIEV, 1 << 1);
  gpio.set_input(1, true);  // GPIOIE clear: raw only
  EXPECT_EQ(read(Pl061::kRIS), 1u << 1);
  EXPECT_EQ(read(Pl061::kMIS), 0u);
  EXPECT_FALSE(line());
  write(Pl061::kIE, 1 << 1);  // unmasked later: the latched edge interrupts
  EXPECT_TRUE(line());
  write(Pl061::kIE, 0);
  EXPECT_FALSE(line());
}

TEST_F(Pl061Test, ALevelInterruptHoldsWhileThePinDoesAndIgnoresGpioic) {
  write(Pl061::kIS, 1 << 5);
  write(Pl061::kIEV, 1 << 5);  // high level
  write(Pl061::kIE, 1 << 5);
  EXPECT_FALSE(line());
  gpio.set_input(5, true);
  EXPECT_TRUE(line());
  write(Pl061::kIC, 1 << 5);
  EXPECT_TRUE(line()) << "a level is not cleared, it is removed";
  gpio.set_input(5, false);
  EXPECT_FALSE(line());
  write(Pl061::kIEV, 0);  // low level: the pin is low now
  EXPECT_TRUE(line());
}

TEST_F(Pl061Test, HostileAccessesAreCountedNeverServed) {
  write(Pl061::kDir, 0xff);
  write(data(0xff), 0xaa);
  const uint32_t errors_before = static_cast<uint32_t>(gpio.counters().guest_errors);
  write(Pl061::kDir + 1, 0x00);        // not a register's start
  write(Pl061::kDir, 0x00, 8);         // 8 bytes
  write(Pl061::kDir, 0x00, 3);         // 3 bytes
  write(Pl061::kRIS, 0xff);            // read-only
  write(Pl061::kMIS, 0xff);
  write(Pl061::kPeriphID0, 0);         // read-only ID
  write(0x800, 0xff);                  // reserved
  write(Pl061::kSize, 0xff);           // past the window
  write(~uint64_t{0} - 3, 0xff);       // far past it
  EXPECT_EQ(read(Pl061::kIC), 0u);     // write-only
  EXPECT_EQ(read(0x424), 0u);          // reserved
  EXPECT_EQ(read(Pl061::kData + 2), 0u);
  EXPECT_EQ(read(Pl061::kDir, 8), 0u);
  EXPECT_EQ(gpio.counters().guest_errors, errors_before + 13u);
  EXPECT_EQ(read(Pl061::kDir), 0xffu) << "no bad access changed a register";
  EXPECT_EQ(read(data(0xff)), 0xaau);
  EXPECT_TRUE(line_changes.empty());
  // Wider accesses at a register's start are the guest's to use.
  write(Pl061::kIE, 0x01, 4);
  EXPECT_EQ(read(Pl061::kIE, 2), 0x01u);
  EXPECT_EQ(gpio.counters().guest_errors, errors_before + 13u);
}

}  // namespace
}  // namespace kvmmio::gpio
