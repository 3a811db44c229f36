// SPDX-License-Identifier: BSD-2-Clause
// The guest's device tree, built from a plain description of the machine,
// so --dump-dtb and the tests can make one without a VM.
//
// Bindings followed (Linux Documentation/devicetree/bindings): arm/psci,
// interrupt-controller/arm,gic-v3 and arm,gic (cortex-a15-gic),
// timer/arm,arch_timer (arm,armv8-timer), serial/pl011 (+ arm,primecell and
// a fixed-clock: amba-pl011 will not probe without clocks), rtc/arm,pl031,
// gpio/pl061-gpio
// and input/gpio-keys (the power key, as QEMU's virt machine has it),
// virtio/mmio,
// chosen (bootargs, stdout-path, linux,initrd-*, rng-seed, kaslr-seed).
// Addresses and interrupts come from vmm/boot/memory_map_arm64.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvmmio/arch/arm64.h"
#include "vmm/boot/boot_layout.h"
#include "vmm/boot/memory_map_arm64.h"

namespace kvmmio::vmm {

struct DeviceTreeSpec {
  uint64_t ram_base = layout::kRamBase;
  uint64_t ram_size = 0;
  // One entry per vCPU, in vCPU order: the MPIDR affinity fields, as
  // KVM assigns them (mpidr_of_vcpu()) or as read back from the vCPU.
  std::vector<uint64_t> cpu_mpidrs;
  arm64::GicVersion gic = arm64::GicVersion::kV3;
  std::string bootargs;
  std::optional<GuestRange> initrd;
  std::vector<layout::VirtioMmioSlot> virtio_mmio;
  std::vector<uint8_t> rng_seed;  // /chosen/rng-seed: entropy for the guest's RNG
  uint64_t kaslr_seed = 0;        // /chosen/kaslr-seed: 0 leaves it out
};

// Device tree paths other code (tests, docs, earlycon) refers to.
inline constexpr const char* kUartPath = "/pl011@9000000";
inline constexpr const char* kRtcPath = "/pl031@9010000";
inline constexpr const char* kGpioPath = "/pl061@9030000";
inline constexpr const char* kPowerKeyPath = "/gpio-keys/poweroff";
inline constexpr uint32_t kGpioPhandle = 3;
// linux/input-event-codes.h's KEY_POWER, what gpio-keys reports.
inline constexpr uint32_t kKeyPower = 116;
inline constexpr uint32_t kGpioActiveHigh = 0;
inline constexpr const char* kGicPath = "/interrupt-controller@8000000";
inline constexpr uint32_t kGicPhandle = 1;
inline constexpr uint32_t kUartClockPhandle = 2;

// Interrupt specifier values of the GIC bindings.
inline constexpr uint32_t kGicSpi = 0;
inline constexpr uint32_t kGicPpi = 1;
inline constexpr uint32_t kIrqTypeEdgeRising = 1;
inline constexpr uint32_t kIrqTypeLevelHigh = 4;

// KVM's default MPIDR affinity for vCPU `index` (Aff0 = index[3:0],
// Aff1 = index[11:4], Aff2 = index[19:12]); the bits a cpu node's reg holds.
uint64_t mpidr_of_vcpu(int index);
// The affinity fields of an MPIDR_EL1 value (drops RES1 bit 31, U, MT).
uint64_t mpidr_affinity(uint64_t mpidr_el1);

// Fills rng_seed (32 bytes) and kaslr_seed from getrandom(2): fresh for
// every boot, as firmware would.
void add_random_seeds(DeviceTreeSpec& spec);

// The blob (at most BootLayout::kDtbMaxSize bytes). Throws FdtError.
std::vector<uint8_t> build_device_tree(const DeviceTreeSpec& spec);

}  // namespace kvmmio::vmm
