// SPDX-License-Identifier: BSD-2-Clause
// The guest's physical memory map and interrupt assignment: THE one place
// they are defined. The machine, the device tree and the docs
// (docs/usage.md, "Memory map") all follow this file; change it here first.
//
// The layout is QEMU's `virt` machine's, which Linux and its users know:
//
//   0x0800_0000  GIC distributor (v3: 64 KiB, v2: 4 KiB)
//   0x0801_0000  GICv2 CPU interface (8 KiB)
//   0x080a_0000  GICv3 redistributors, 128 KiB per vCPU, up to 0x0900_0000
//   0x0900_0000  PL011 UART (4 KiB), SPI 1
//   0x0901_0000  PL031 RTC (4 KiB), SPI 2
//   0x0903_0000  PL061 GPIO (4 KiB), SPI 7: pin 3 is the power key
//   0x0a00_0000  virtio-mmio: 32 slots, one per 64 KiB, 0x200 bytes of
//                registers each, slot n on SPI 16 + n (up to 0x0a20_0000)
//   0x4000_0000  RAM (--mem bytes), up to the 40-bit IPA limit (1 TiB)
//
// Interrupt numbering: GSI n == SPI n == GIC INTID n + 32 (the routing KVM
// installs by default and kvmmio keeps). Device tree "interrupts" cells
// name SPIs by n, PPIs by INTID - 16.
#pragma once

#include <cstdint>

#include "kvmmio/arch/arm64.h"

namespace kvmmio::vmm::layout {

// --- Interrupt controller ----------------------------------------------------
constexpr uint64_t kGicDistBase = 0x08000000;
constexpr uint64_t kGicV2CpuBase = 0x08010000;
constexpr uint64_t kGicV3RedistBase = 0x080a0000;
constexpr uint64_t kGicV3RedistEnd = 0x09000000;  // the UART starts here

constexpr arm64::GicLayout kGicLayout{
    .dist_base = kGicDistBase, .redist_base = kGicV3RedistBase, .cpu_base = kGicV2CpuBase};

// How many vCPUs each GIC version can describe in this layout. GICv2's CPU
// interface addresses at most 8 CPUs; GICv3's redistributor frames must fit
// below the UART.
constexpr int kMaxCpusGicV2 = 8;
constexpr int kMaxCpusGicV3 =
    static_cast<int>((kGicV3RedistEnd - kGicV3RedistBase) / arm64::GicLayout::kRedistSizePerCpu);
static_assert(kMaxCpusGicV3 == 123);

// Interrupt IDs the vGIC implements: 32 private (SGI, PPI) plus 96 SPIs.
constexpr uint32_t kGicNrIrqs = 128;
constexpr uint32_t kNrSpis = kGicNrIrqs - arm64::kSpiBase;

// --- Architected timer PPIs (INTIDs 29, 30, 27, 26; cells are INTID - 16) --
constexpr uint32_t kTimerSecurePhysPpi = 13;
constexpr uint32_t kTimerNonSecurePhysPpi = 14;
constexpr uint32_t kTimerVirtPpi = 11;
constexpr uint32_t kTimerHypPpi = 10;

// --- UART --------------------------------------------------------------------
constexpr uint64_t kUartBase = 0x09000000;
constexpr uint64_t kUartSize = 0x1000;
constexpr uint32_t kUartSpi = 1;
// The PL011's reference clock as the device tree's fixed-clock announces it.
// Nothing is clocked (bytes move instantly), but Linux's amba-pl011 driver
// refuses to probe without a clock and derives baud divisors from it.
constexpr uint32_t kUartClockHz = 24000000;

// --- GPIO: the power key --------------------------------------------------
// QEMU virt's address and SPI for its PL061, whose pin 3 is its power key
// (gpio-keys, KEY_POWER): guests and their docs know this one.
constexpr uint64_t kGpioBase = 0x09030000;
constexpr uint64_t kGpioSize = 0x1000;
constexpr uint32_t kGpioSpi = 7;
constexpr unsigned kPowerKeyPin = 3;
static_assert(kGpioBase >= kUartBase + kUartSize, "GPIO overlaps the UART");
static_assert(kGpioSpi != kUartSpi, "GPIO and UART share an SPI");

// --- RTC -----------------------------------------------------------------------
// QEMU virt's address and SPI for its PL031 real-time clock.
constexpr uint64_t kRtcBase = 0x09010000;
constexpr uint64_t kRtcSize = 0x1000;
constexpr uint32_t kRtcSpi = 2;
static_assert(kRtcBase >= kUartBase + kUartSize, "RTC overlaps the UART");
static_assert(kRtcBase + kRtcSize <= kGpioBase, "RTC runs into the GPIO");
static_assert(kRtcSpi != kUartSpi && kRtcSpi != kGpioSpi, "RTC shares an SPI");

// --- virtio-mmio window ------------------------------------------------------
constexpr uint64_t kVirtioMmioBase = 0x0a000000;
constexpr uint64_t kVirtioMmioSlotSize = 0x200;  // the register window (device tree "reg")
// One slot per 64 KiB: each register window starts a host page of its own
// on 4, 16 and 64 KiB page hosts, as the read-only memory slot of its
// register mirror (regs=mirror) requires; the rest of that page is unused.
// A host with larger pages is refused at start (host_page.h).
constexpr uint64_t kVirtioMmioSlotStride = 0x10000;
constexpr uint32_t kVirtioMmioSlots = 32;
constexpr uint32_t kVirtioMmioFirstSpi = 16;

// One virtio-mmio device's place in the machine.
struct VirtioMmioSlot {
  uint32_t index = 0;
  uint64_t base = 0;
  uint64_t size = kVirtioMmioSlotSize;
  uint32_t spi = 0;  // == the GSI an irqfd raises
};

constexpr VirtioMmioSlot virtio_mmio_slot(uint32_t index) {
  return VirtioMmioSlot{index, kVirtioMmioBase + index * kVirtioMmioSlotStride, kVirtioMmioSlotSize,
                        kVirtioMmioFirstSpi + index};
}
static_assert(kVirtioMmioFirstSpi + kVirtioMmioSlots <= kNrSpis, "virtio SPIs beyond the vGIC");
static_assert(kUartSpi < kVirtioMmioFirstSpi, "UART SPI collides with virtio SPIs");
static_assert(kGpioSpi < kVirtioMmioFirstSpi, "GPIO SPI collides with virtio SPIs");
static_assert(kGpioBase + kGpioSize <= kVirtioMmioBase, "GPIO runs into the virtio window");
static_assert(kRtcSpi < kVirtioMmioFirstSpi, "RTC SPI collides with virtio SPIs");
static_assert(kVirtioMmioSlotSize <= kVirtioMmioSlotStride);
static_assert(kVirtioMmioBase % kVirtioMmioSlotStride == 0, "slots must start host pages");
static_assert(kVirtioMmioBase + kVirtioMmioSlots * kVirtioMmioSlotStride <= 0x40000000,
              "virtio window runs into RAM");

// --- RAM -----------------------------------------------------------------------
constexpr uint64_t kRamBase = 0x40000000;
// KVM_CREATE_VM with machine type 0 gives a 40-bit guest physical space.
constexpr uint64_t kGuestPhysEnd = uint64_t{1} << 40;
constexpr uint64_t kMaxRamSize = kGuestPhysEnd - kRamBase;
// --mem granularity: 1 MiB is a whole number of host pages for 4, 16 and
// 64 KiB host page sizes, as KVM memory slots require.
constexpr uint64_t kRamAlign = uint64_t{1} << 20;
constexpr uint64_t kDefaultRamSize = uint64_t{512} << 20;

}  // namespace kvmmio::vmm::layout

namespace kvmmio::vmm::layout {

// The most vCPUs this layout can give a guest with this GIC.
constexpr int max_cpus(arm64::GicVersion gic) {
  return gic == arm64::GicVersion::kV2 ? kMaxCpusGicV2 : kMaxCpusGicV3;
}

}  // namespace kvmmio::vmm::layout
