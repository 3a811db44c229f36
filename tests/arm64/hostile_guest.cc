// SPDX-License-Identifier: BSD-2-Clause
// hostile_guest: a program for the L2 guest of the arm64 platform's
// hostile-guest scenario (tests/arm64/scenarios/hostile-guest.sh). It
// plays the guest of issue #13 against kvmmio's own devices, from
// userspace: the virtio-mmio drivers are unbound first (the hook does
// that), then this program maps the device windows and RAM that L2's
// kernel does not use (mem= below kvmmio's --mem) through /dev/mem and
// drives the devices by hand, building abusive rings there:
//
//   console  one transmit chain of 63 descriptors naming the same 64 MiB
//            (4032 MiB per chain), 128 avail entries naming it, refilled
//            as they come back
//   net      (userspace backend) RX chains of 255 device-readable bytes
//            and one writable byte, every avail entry the same head, with
//            MRG_RXBUF: a ~64 KiB frame from the tap would take 65,000 of
//            them; refilled whenever the device has taken all; and TX
//            frames, the same head 256 times, refilled as they come back
//   storm    (a second net device) reset, an invalid queue (QueueNum 3),
//            reset, a valid bring-up to DRIVER_OK, over and over; counts
//            the bring-ups refused (DEVICE_NEEDS_RESET after DRIVER_OK)
//
// It runs until killed, printing one line of progress every 5 seconds.
//
//   hostile_guest RESERVED_BASE RESERVED_SIZE   (hex or decimal bytes)
//
// Register accesses go through an uncached /dev/mem mapping (every one an
// MMIO exit); ring memory is mapped as device memory too, so every store
// is aligned and 16, 32 or 64 bits wide.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "vmm/memory_map_arm64.h"

namespace {

// kvmmio's virtio-mmio slots: a register window at the start of each 64
// KiB (each has a host page of its own for the register mirror).
constexpr uint64_t kSlotBase = kvmmio::vmm::layout::kVirtioMmioBase;
constexpr uint64_t kSlotStride = kvmmio::vmm::layout::kVirtioMmioSlotStride;
constexpr unsigned kSlots = 8;

// virtio-mmio registers (virtio 1.2, 4.2.2).
enum : uint32_t {
  kMagic = 0x000, kVersion = 0x004, kDeviceId = 0x008, kDeviceFeaturesSel = 0x014,
  kDriverFeatures = 0x020, kDriverFeaturesSel = 0x024, kQueueSel = 0x030, kQueueNum = 0x038,
  kQueueReady = 0x044, kQueueNotify = 0x050, kInterruptStatus = 0x060, kInterruptAck = 0x064,
  kStatus = 0x070, kQueueDescLow = 0x080, kQueueDescHigh = 0x084, kQueueDriverLow = 0x090,
  kQueueDriverHigh = 0x094, kQueueDeviceLow = 0x0a0, kQueueDeviceHigh = 0x0a4,
};
constexpr uint32_t kAck = 1, kDriver = 2, kDriverOk = 4, kFeaturesOk = 8;
constexpr uint16_t kNext = 1, kWrite = 2;
constexpr unsigned kFMrgRxbuf = 15, kFEventIdx = 29, kFVersion1 = 32;

volatile uint8_t* g_mmio;
volatile uint8_t* g_ram;
uint64_t g_ram_gpa;

void barrier() { __sync_synchronize(); }

struct Device {
  volatile uint8_t* regs;
  uint32_t read(uint32_t off) const { return *reinterpret_cast<volatile uint32_t*>(regs + off); }
  void write(uint32_t off, uint32_t v) const { *reinterpret_cast<volatile uint32_t*>(regs + off) = v; }
};

template <typename T>
volatile T& at(uint64_t offset) {
  return *reinterpret_cast<volatile T*>(g_ram + offset);
}

// A split ring in the reserved RAM: descriptors, then the avail ring one
// page on, the used ring a page after that.
struct Ring {
  uint64_t off;  // into the reserved RAM
  uint16_t size;
  uint16_t avail_idx = 0;
  uint64_t desc() const { return off; }
  uint64_t avail() const { return off + 0x1000; }
  uint64_t used() const { return off + 0x2000; }
  void set_desc(uint16_t i, uint64_t buf_off, uint32_t len, uint16_t flags, uint16_t next) {
    at<uint64_t>(desc() + 16u * i) = g_ram_gpa + buf_off;
    at<uint32_t>(desc() + 16u * i + 8) = len;
    at<uint16_t>(desc() + 16u * i + 12) = flags;
    at<uint16_t>(desc() + 16u * i + 14) = next;
  }
  // `count` avail entries naming `head`, published.
  void expose(uint16_t head, uint16_t count) {
    for (uint16_t i = 0; i < count; ++i) at<uint16_t>(avail() + 4 + 2u * ((avail_idx + i) % size)) = head;
    avail_idx = static_cast<uint16_t>(avail_idx + count);
    barrier();
    at<uint16_t>(avail() + 2) = avail_idx;
    barrier();
  }
  uint16_t used_idx() const { return at<uint16_t>(used() + 2); }
  // With EVENT_IDX: where the device is in the avail ring when it went idle.
  uint16_t avail_event() const { return at<uint16_t>(used() + 4 + 8u * size); }
  void zero() {
    for (uint64_t o = 0; o < 0x3000; o += 8) at<uint64_t>(off + o) = 0;
    avail_idx = 0;
  }
};

void set_queue(const Device& d, uint32_t index, const Ring& r) {
  d.write(kQueueSel, index);
  d.write(kQueueNum, r.size);
  const uint64_t gpas[3] = {g_ram_gpa + r.desc(), g_ram_gpa + r.avail(), g_ram_gpa + r.used()};
  const uint32_t regs[3][2] = {{kQueueDescLow, kQueueDescHigh}, {kQueueDriverLow, kQueueDriverHigh},
                               {kQueueDeviceLow, kQueueDeviceHigh}};
  for (int i = 0; i < 3; ++i) {
    d.write(regs[i][0], static_cast<uint32_t>(gpas[i]));
    d.write(regs[i][1], static_cast<uint32_t>(gpas[i] >> 32));
  }
  d.write(kQueueReady, 1);
}

// Reset, negotiate `features`, FEATURES_OK; false if refused.
bool negotiate(const Device& d, uint64_t features) {
  d.write(kStatus, 0);
  d.write(kStatus, kAck);
  d.write(kStatus, kAck | kDriver);
  for (uint32_t sel = 0; sel < 2; ++sel) {
    d.write(kDriverFeaturesSel, sel);
    d.write(kDriverFeatures, static_cast<uint32_t>(features >> (32 * sel)));
  }
  d.write(kStatus, kAck | kDriver | kFeaturesOk);
  return d.read(kStatus) & kFeaturesOk;
}

void driver_ok(const Device& d) { d.write(kStatus, kAck | kDriver | kFeaturesOk | kDriverOk); }

uint64_t number(const char* s) { return std::strtoull(s, nullptr, 0); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: hostile_guest RESERVED_BASE RESERVED_SIZE\n");
    return 2;
  }
  g_ram_gpa = number(argv[1]);
  const uint64_t ram_size = number(argv[2]);
  if (ram_size < (96u << 20)) {
    std::fprintf(stderr, "hostile_guest: needs 96 MiB of reserved RAM\n");
    return 2;
  }
  const int mem = ::open("/dev/mem", O_RDWR | O_SYNC);
  if (mem < 0) return std::perror("/dev/mem"), 1;
  void* m = ::mmap(nullptr, kSlots * kSlotStride, PROT_READ | PROT_WRITE, MAP_SHARED, mem, kSlotBase);
  void* r = ::mmap(nullptr, ram_size, PROT_READ | PROT_WRITE, MAP_SHARED, mem, static_cast<off_t>(g_ram_gpa));
  if (m == MAP_FAILED || r == MAP_FAILED) return std::perror("mmap /dev/mem"), 1;
  g_mmio = static_cast<volatile uint8_t*>(m);
  g_ram = static_cast<volatile uint8_t*>(r);

  // The devices by ID, in slot order: the first net floods, the second
  // storms, the console floods.
  Device net{}, storm{}, console{};
  for (unsigned s = 0; s < kSlots; ++s) {
    Device d{g_mmio + s * kSlotStride};
    if (d.read(kMagic) != 0x74726976 || d.read(kVersion) != 2) continue;
    const uint32_t id = d.read(kDeviceId);
    if (id == 1 && !net.regs) net = d;
    else if (id == 1 && !storm.regs) storm = d;
    else if (id == 3 && !console.regs) console = d;
  }
  if (!net.regs || !storm.regs || !console.regs) {
    std::fprintf(stderr, "hostile_guest: wants two virtio-net devices and a virtio console (modern)\n");
    return 1;
  }

  const uint64_t v1 = 1ull << kFVersion1, event_idx = 1ull << kFEventIdx;
  // Console: transmitq (1) of 128 entries; one 4032 MiB chain.
  Ring con_tx{0x00000, 128};
  con_tx.zero();
  if (!negotiate(console, v1)) return std::fprintf(stderr, "console refused its features\n"), 1;
  set_queue(console, 1, con_tx);
  driver_ok(console);
  const uint64_t big = 32u << 20, big_len = 64u << 20;
  for (uint16_t i = 0; i < 63; ++i) con_tx.set_desc(i, big, static_cast<uint32_t>(big_len), i < 62 ? kNext : 0, i + 1);

  // Net: RX (0) and TX (1), 256 entries each.
  Ring rx{0x10000, 256}, tx{0x20000, 256};
  rx.zero();
  tx.zero();
  if (!negotiate(net, v1 | event_idx | (1ull << kFMrgRxbuf))) return std::fprintf(stderr, "net refused\n"), 1;
  set_queue(net, 0, rx);
  set_queue(net, 1, tx);
  driver_ok(net);
  // RX head 0: 255 readable bytes, then one writable byte.
  for (uint16_t i = 0; i < 255; ++i) rx.set_desc(i, 0x30000 + i, 1, kNext, i + 1);
  rx.set_desc(255, 0x31000, 1, kWrite, 0);
  // TX head 0: a 12-byte header and a 1514-byte broadcast frame.
  for (uint64_t o = 0; o < 1536; o += 8) at<uint64_t>(0x40000 + o) = 0;
  for (int i = 0; i < 6; ++i) at<uint8_t>(0x40000 + 12 + i) = 0xff;
  at<uint16_t>(0x40000 + 12 + 12) = 0xb588;  // EtherType 0x88b5, big-endian
  tx.set_desc(0, 0x40000, 12 + 1514, 0, 0);

  Ring storm_rx{0x50000, 64}, storm_tx{0x60000, 64};
  storm_rx.zero();
  storm_tx.zero();

  con_tx.expose(0, 128);
  console.write(kQueueNotify, 1);
  rx.expose(0, 128);
  net.write(kQueueNotify, 0);
  tx.expose(0, 256);
  net.write(kQueueNotify, 1);
  std::printf("KVMMIO-L2-HOSTILE: flooding\n");
  std::fflush(stdout);

  uint64_t con_posted = 128, rx_posted = 128, tx_posted = 256, storms = 0, refused = 0;
  auto last = std::chrono::steady_clock::now();
  for (uint64_t round = 0;; ++round) {
    // Console: refill what came back.
    if (const uint16_t back = static_cast<uint16_t>(128 - (con_tx.avail_idx - con_tx.used_idx())); back) {
      con_tx.expose(0, back);
      con_posted += back;
      console.write(kQueueNotify, 1);
    }
    // RX: the device took everything: more of the same head.
    if (rx.avail_event() == rx.avail_idx) {
      rx.expose(0, 128);
      rx_posted += 128;
      net.write(kQueueNotify, 0);
    }
    // TX: refill what came back.
    if (const uint16_t back = static_cast<uint16_t>(256 - (tx.avail_idx - tx.used_idx())); back) {
      tx.expose(0, back);
      tx_posted += back;
      net.write(kQueueNotify, 1);
    }
    for (const Device* d : {&console, &net}) d->write(kInterruptAck, d->read(kInterruptStatus));
    // The storm device, sixteen times a round: an invalid queue, then a
    // valid bring-up (faster than kvmmio's 16 activations per second, so
    // its token bucket refuses some: DEVICE_NEEDS_RESET after DRIVER_OK).
    // Mostly the cheapest activation there is (no queue: seven register
    // writes), every eighth with an invalid and then two valid queues.
    // Sixteen, not four: on a busy machine the floods above made a round
    // so slow that four a round came to 17 bring-ups a second, and the
    // bucket engaged only after the last report (a CI run saw 0 refused).
    for (int burst = 0; burst < 16; ++burst) {
      const bool full = storms % 8 == 0;
      if (full) {
        negotiate(storm, v1);
        storm.write(kQueueSel, 0);
        storm.write(kQueueNum, 3);
        storm.write(kQueueReady, 1);
      }
      negotiate(storm, v1);
      if (full) {
        storm_rx.zero();
        storm_tx.zero();
        set_queue(storm, 0, storm_rx);
        set_queue(storm, 1, storm_tx);
      }
      driver_ok(storm);
      refused += (storm.read(kStatus) & 0x40) != 0;  // DEVICE_NEEDS_RESET
      ++storms;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last >= std::chrono::seconds(5)) {
      last = now;
      std::printf("KVMMIO-L2-HOSTILE: console chains %llu, rx buffers %llu, tx frames %llu, storms %llu "
                  "(%llu refused)\n",
                  (unsigned long long)con_posted, (unsigned long long)rx_posted,
                  (unsigned long long)tx_posted, (unsigned long long)storms, (unsigned long long)refused);
      std::fflush(stdout);
    }
  }
}
