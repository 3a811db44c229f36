// SPDX-License-Identifier: BSD-2-Clause
// PlatformDevices: see platform_devices.h.
#include "vmm/machine/platform_devices.h"

#include <stdexcept>

#include "kvmmio/arch/arm64.h"
#include "vmm/boot/memory_map_arm64.h"
#include "vmm/stats/device_stats.h"

namespace kvmmio::vmm {
namespace {

// The --stats counters of a device that reports its own table, nothing
// added (the PL061, the PL031).
template <typename Model>
Counters table_counters(const Model& model) {
  Counters c;
  append_counters(c, model.counters());
  return c;
}

}  // namespace

PlatformDevices::PlatformDevices(Vm& vm, EventLoop& control, int console_out) : console_out_(console_out) {
  // The UART: TX to the console, its level line through KVM_IRQ_LINE (see
  // kvmmio/console/pl011.h for why level).
  uart_ = std::make_unique<console::Pl011>(
      [this](uint8_t byte) { console_out_.put(byte); },
      [&vm](bool level) { vm.irq_line(arm64::irq_line_spi(layout::kUartSpi), level); });
  vm.mmio_bus().claim(layout::kUartBase, layout::kUartSize, *uart_, "pl011");
  console_sink_ = uart_.get();

  // The power key: a PL061 pin the device tree names KEY_POWER; its line
  // is a level, as the UART's.
  gpio_ = std::make_unique<gpio::Pl061>(
      [&vm](bool level) { vm.irq_line(arm64::irq_line_spi(layout::kGpioSpi), level); });
  vm.mmio_bus().claim(layout::kGpioBase, layout::kGpioSize, *gpio_, "pl061");
  power_key_ = std::make_unique<PowerKey>(*gpio_, layout::kPowerKeyPin, control);

  // The real-time clock: the host's time; its match alarm a timerfd on
  // the control thread, its line a level, as the UART's.
  rtc_alarm_ = std::make_unique<RtcAlarm>(control, [this] { rtc_->alarm_due(); });
  rtc_ = std::make_unique<rtc::Pl031>(
      [&vm](bool level) { vm.irq_line(arm64::irq_line_spi(layout::kRtcSpi), level); },
      [this](std::optional<int64_t> at) { rtc_alarm_->arm(at); });
  vm.mmio_bus().claim(layout::kRtcBase, layout::kRtcSize, *rtc_, "pl031");
}

void PlatformDevices::take_console_input(ConsoleInputSink& sink) {
  if (console_sink_ != uart_.get()) throw std::logic_error("two devices take the console input");
  console_sink_ = &sink;
}

void PlatformDevices::start_console_input(EventLoop& control, int fd, bool escapes, std::function<void()> on_quit) {
  console_in_ = std::make_unique<ConsoleInput>(control, fd, *console_sink_, escapes, std::move(on_quit));
}

void PlatformDevices::reset() {
  uart_->reset();
  gpio_->reset();
  rtc_->reset();
}

std::vector<DeviceStats> PlatformDevices::stats() const {
  return {
      DeviceStats{"uart0", "pl011", layout::kUartBase, layout::kUartSize, layout::kUartSpi,
                  pl011_counters(uart_->counters())},
      DeviceStats{"gpio0", "pl061", layout::kGpioBase, layout::kGpioSize, layout::kGpioSpi, table_counters(*gpio_)},
      DeviceStats{"rtc0", "pl031", layout::kRtcBase, layout::kRtcSize, layout::kRtcSpi, table_counters(*rtc_)},
  };
}

}  // namespace kvmmio::vmm
