// SPDX-License-Identifier: BSD-2-Clause
// Builds the guest's device tree from a DeviceTreeSpec (see device_tree.h).
#include "vmm/boot/device_tree.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>

#include "kvmmio/base/error.h"
#include "vmm/boot/fdt_writer.h"

namespace kvmmio::vmm {
namespace {

std::string unit_name(const char* name, uint64_t address) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s@%llx", name, static_cast<unsigned long long>(address));
  return buf;
}

// "reg" with #address-cells = #size-cells = 2 (the root's).
void reg(FdtWriter& fdt, std::initializer_list<std::pair<uint64_t, uint64_t>> ranges) {
  std::vector<uint32_t> cells;
  for (auto [base, size] : ranges) {
    cells.insert(cells.end(), {hi32(base), lo32(base), hi32(size), lo32(size)});
  }
  fdt.property_cells("reg", cells);
}

void add_memory(FdtWriter& fdt, const DeviceTreeSpec& spec) {
  auto node = fdt.begin_node(unit_name("memory", spec.ram_base));
  fdt.property_string("device_type", "memory");
  reg(fdt, {{spec.ram_base, spec.ram_size}});
}

void add_cpus(FdtWriter& fdt, const DeviceTreeSpec& spec) {
  auto cpus = fdt.begin_node("cpus");
  // One cell holds Aff2..Aff0, enough for every vCPU count kvmmio allows.
  fdt.property_u32("#address-cells", 1);
  fdt.property_u32("#size-cells", 0);
  for (uint64_t mpidr : spec.cpu_mpidrs) {
    if (mpidr > 0xffffffff) throw FdtError("device tree: MPIDR with Aff3 set is not supported");
    auto cpu = fdt.begin_node(unit_name("cpu", mpidr));
    fdt.property_string("device_type", "cpu");
    fdt.property_string("compatible", "arm,arm-v8");
    // Secondaries wait powered off in KVM until the guest's PSCI CPU_ON.
    fdt.property_string("enable-method", "psci");
    fdt.property_u32("reg", static_cast<uint32_t>(mpidr));
  }
}

void add_psci(FdtWriter& fdt) {
  auto node = fdt.begin_node("psci");
  // KVM_ARM_VCPU_PSCI_0_2 is what the vCPUs are initialised with. Linux
  // reads PSCI_VERSION through it anyway and uses 1.x features if KVM has
  // them, so 0.2 is the honest and sufficient compatible.
  fdt.property_string("compatible", "arm,psci-0.2");
  fdt.property_string("method", "hvc");
}

void add_gic(FdtWriter& fdt, const DeviceTreeSpec& spec) {
  auto node = fdt.begin_node(kGicPath + 1);
  if (spec.gic == arm64::GicVersion::kV3) {
    fdt.property_string("compatible", "arm,gic-v3");
    reg(fdt,
        {{layout::kGicDistBase, arm64::GicLayout::kDistSizeV3},
         {layout::kGicV3RedistBase, arm64::GicLayout::kRedistSizePerCpu * spec.cpu_mpidrs.size()}});
  } else {
    fdt.property_string("compatible", "arm,cortex-a15-gic");
    reg(fdt, {{layout::kGicDistBase, arm64::GicLayout::kDistSizeV2},
              {layout::kGicV2CpuBase, arm64::GicLayout::kCpuSizeV2}});
  }
  fdt.property_u32("#interrupt-cells", 3);
  fdt.property_empty("interrupt-controller");
  // No children (no ITS, no v2m frame), but dtc expects an interrupt
  // provider to say how its children would be addressed.
  fdt.property_u32("#address-cells", 0);
  fdt.property_u32("phandle", kGicPhandle);
}

void add_timer(FdtWriter& fdt, const DeviceTreeSpec& spec) {
  auto node = fdt.begin_node("timer");
  fdt.property_string("compatible", "arm,armv8-timer");
  // GICv2 PPI specifiers carry the mask of CPUs the PPI is wired to in
  // bits 15:8; GICv3 has no such field.
  uint32_t flags = kIrqTypeLevelHigh;
  if (spec.gic == arm64::GicVersion::kV2) flags |= ((1u << spec.cpu_mpidrs.size()) - 1) << 8;
  fdt.property_cells(
      "interrupts",
      {kGicPpi, layout::kTimerSecurePhysPpi, flags, kGicPpi, layout::kTimerNonSecurePhysPpi, flags,
       kGicPpi, layout::kTimerVirtPpi, flags, kGicPpi, layout::kTimerHypPpi, flags});
}

void add_uart(FdtWriter& fdt) {
  {
    auto clock = fdt.begin_node("apb-pclk");
    fdt.property_string("compatible", "fixed-clock");
    fdt.property_u32("#clock-cells", 0);
    fdt.property_u32("clock-frequency", layout::kUartClockHz);
    fdt.property_string("clock-output-names", "clk24mhz");
    fdt.property_u32("phandle", kUartClockPhandle);
  }
  auto node = fdt.begin_node(kUartPath + 1);
  // arm,primecell: Linux's AMBA bus matches the device by the peripheral
  // ID registers the model implements, not by the name.
  fdt.property_strings("compatible", {"arm,pl011", "arm,primecell"});
  reg(fdt, {{layout::kUartBase, layout::kUartSize}});
  // Level: the PL011's UARTINTR stays asserted while an unmasked status bit
  // is set (kvmmio/console/pl011.h).
  fdt.property_cells("interrupts", {kGicSpi, layout::kUartSpi, kIrqTypeLevelHigh});
  fdt.property_cells("clocks", {kUartClockPhandle, kUartClockPhandle});
  fdt.property_strings("clock-names", {"uartclk", "apb_pclk"});
}

// The real-time clock, as QEMU's virt machine describes its PL031.
void add_rtc(FdtWriter& fdt) {
  auto node = fdt.begin_node(kRtcPath + 1);
  fdt.property_strings("compatible", {"arm,pl031", "arm,primecell"});
  reg(fdt, {{layout::kRtcBase, layout::kRtcSize}});
  // Level: RTCINTR stays asserted until RTCICR clears the match. Without
  // an interrupt Linux's rtc-pl031 would offer no alarm.
  fdt.property_cells("interrupts", {kGicSpi, layout::kRtcSpi, kIrqTypeLevelHigh});
  fdt.property_u32("clocks", kUartClockPhandle);
  fdt.property_string("clock-names", "apb_pclk");
}

// The power key: a PL061 whose pin 3 gpio-keys reports as KEY_POWER,
// active high (vmm/machine/power_key.h), node for node as QEMU's virt machine
// makes it, so guests configured for that find it.
void add_power_key(FdtWriter& fdt) {
  {
    auto node = fdt.begin_node(kGpioPath + 1);
    fdt.property_strings("compatible", {"arm,pl061", "arm,primecell"});
    reg(fdt, {{layout::kGpioBase, layout::kGpioSize}});
    // Level: GPIOINTR stays asserted while an unmasked status bit is set.
    fdt.property_cells("interrupts", {kGicSpi, layout::kGpioSpi, kIrqTypeLevelHigh});
    fdt.property_u32("#gpio-cells", 2);
    fdt.property_empty("gpio-controller");
    fdt.property_u32("clocks", kUartClockPhandle);
    fdt.property_string("clock-names", "apb_pclk");
    fdt.property_u32("phandle", kGpioPhandle);
  }
  auto keys = fdt.begin_node("gpio-keys");
  fdt.property_string("compatible", "gpio-keys");
  auto key = fdt.begin_node("poweroff");
  fdt.property_string("label", "GPIO Key Poweroff");
  fdt.property_u32("linux,code", kKeyPower);
  fdt.property_cells("gpios", {kGpioPhandle, layout::kPowerKeyPin, kGpioActiveHigh});
}

void add_virtio_mmio(FdtWriter& fdt, const layout::VirtioMmioSlot& slot) {
  auto node = fdt.begin_node(unit_name("virtio", slot.base));
  fdt.property_string("compatible", "virtio,mmio");
  reg(fdt, {{slot.base, slot.size}});
  // Edge: an irqfd write is one event, and vhost signals through irqfds;
  // a level line would need resamplefds (see docs/architecture.md).
  fdt.property_cells("interrupts", {kGicSpi, slot.spi, kIrqTypeEdgeRising});
  // Guest memory is ordinary cacheable RAM shared with the host: no
  // bounce buffers or cache maintenance for virtqueues.
  fdt.property_empty("dma-coherent");
}

void add_chosen(FdtWriter& fdt, const DeviceTreeSpec& spec) {
  auto node = fdt.begin_node("chosen");
  fdt.property_string("bootargs", spec.bootargs);
  // earlycon (no argument) and the console fallback both find the UART here.
  fdt.property_string("stdout-path", kUartPath);
  if (spec.initrd) {
    fdt.property_u64("linux,initrd-start", spec.initrd->start);
    fdt.property_u64("linux,initrd-end", spec.initrd->end);
  }
  if (!spec.rng_seed.empty()) fdt.property("rng-seed", spec.rng_seed);
  if (spec.kaslr_seed != 0) fdt.property_u64("kaslr-seed", spec.kaslr_seed);
}

}  // namespace

uint64_t mpidr_of_vcpu(int index) {
  const uint64_t i = static_cast<uint64_t>(index);
  return (i & 0xf) | (((i >> 4) & 0xff) << 8) | (((i >> 12) & 0xff) << 16);
}

void add_random_seeds(DeviceTreeSpec& spec) {
  uint8_t bytes[40];
  size_t done = 0;
  while (done < sizeof bytes) {
    const ssize_t r = ::getrandom(bytes + done, sizeof bytes - done, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_errno("getrandom for the guest's rng-seed");
    done += static_cast<size_t>(r);
  }
  spec.rng_seed.assign(bytes, bytes + 32);
  spec.kaslr_seed = 0;
  for (size_t i = 32; i < 40; ++i) spec.kaslr_seed = (spec.kaslr_seed << 8) | bytes[i];
  if (spec.kaslr_seed == 0) spec.kaslr_seed = 1;  // 0 would mean "no seed"
}

uint64_t mpidr_affinity(uint64_t mpidr_el1) { return mpidr_el1 & 0xff00ffffffULL; }

std::vector<uint8_t> build_device_tree(const DeviceTreeSpec& spec) {
  if (spec.cpu_mpidrs.empty()) throw FdtError("device tree: no vCPUs described");
  FdtWriter fdt;
  {
    auto root = fdt.begin_node("");
    fdt.property_string("compatible", "linux,dummy-virt");
    fdt.property_string("model", "kvmmio");
    fdt.property_u32("#address-cells", 2);
    fdt.property_u32("#size-cells", 2);
    fdt.property_u32("interrupt-parent", kGicPhandle);

    add_chosen(fdt, spec);
    {
      auto aliases = fdt.begin_node("aliases");
      fdt.property_string("serial0", kUartPath);
    }
    add_memory(fdt, spec);
    add_cpus(fdt, spec);
    add_psci(fdt);
    add_gic(fdt, spec);
    add_timer(fdt, spec);
    add_uart(fdt);
    add_rtc(fdt);
    add_power_key(fdt);
    for (const auto& slot : spec.virtio_mmio) add_virtio_mmio(fdt, slot);
  }
  std::vector<uint8_t> blob = fdt.finish();
  if (blob.size() > BootLayout::kDtbMaxSize)
    throw FdtError("device tree: " + std::to_string(blob.size()) +
                   " bytes, over the 2 MiB arm64 limit");
  return blob;
}

}  // namespace kvmmio::vmm
