// SPDX-License-Identifier: BSD-2-Clause
// hostile_guest: the hostile guest of the arm64 platform's hostile-guest
// and disk-stall scenarios (tests/arm64/scenarios/hostile-guest.sh,
// disk-stall.sh), a guest that attacks kvmmio's own devices from L2's
// userspace: the virtio-mmio drivers of the devices it attacks are
// unbound first (the L2 hook does that), then this program maps the
// device windows (each it may: /dev/mem refuses those a driver holds) and
// RAM that L2's kernel does not use (mem= below kvmmio's --mem) through
// /dev/mem and drives the devices by hand, building abusive rings there.
// Modes:
//
//   hostile_guest RESERVED_BASE RESERVED_SIZE   (hex or decimal bytes)
//     console  one transmit chain of 63 descriptors naming the same 64 MiB
//              (4032 MiB per chain), 128 avail entries naming it, refilled
//              as they come back
//     net      (userspace backend) RX chains of 255 device-readable bytes
//              and one writable byte, every avail entry the same head, with
//              MRG_RXBUF: a ~64 KiB frame from the tap would take 65,000 of
//              them; refilled whenever the device has taken all; and TX
//              frames, the same head 256 times, refilled as they come back
//     storm    (a second net device) reset, an invalid queue (QueueNum 3),
//              reset, a valid bring-up to DRIVER_OK, over and over; counts
//              the bring-ups refused (DEVICE_NEEDS_RESET after DRIVER_OK)
//
//   hostile_guest disk RESERVED_BASE RESERVED_SIZE [HOLD_MS]
//     the first virtio-blk device, every request queue it offers (MQ):
//     the largest IN/OUT requests the device admits (seg_max data
//     segments of size_max bytes each, as far as the capacity allows; 4
//     MiB segments where size_max is not offered), every segment the same
//     guest buffer, reads and writes alternating, through indirect tables
//     so every one of a queue's 256 avail entries is a request; refilled as
//     requests complete for HOLD_MS (default 100), then a reset (status 0)
//     and a new bring-up, over and over. Each reset's duration is timed:
//     the status write is an MMIO exit that returns when kvmmio has reset
//     the device; the progress line gives their p50, p90 and maximum.
//     Interrupts are suppressed (the program polls).
//
// Both run until killed, printing one line of progress every few seconds.
//
//   hostile_guest echo RESERVED_BASE RESERVED_SIZE
//     the disk-stall scenario's L2 side, on CPU 0: prints
//     KVMMIO-L2-ECHO-READY, then writes every line it reads from stdin
//     (the console, its terminal's own echo off) back to stdout; the line
//     KVMMIO-START-FLOOD also starts the disk mode in a child on CPU 1, so
//     the echo measures kvmmio, not a guest CPU the flood keeps busy.
//     Compiled rather than a shell loop, whose per-byte reads made each
//     echo cost ~50 ms of L2 time under TCG on a busy host.
//
// Register accesses go through an uncached /dev/mem mapping (every one an
// MMIO exit); ring memory is mapped as device memory too, so every store
// is aligned and 16, 32 or 64 bits wide.
//
// One mode runs in L1, not L2 (the disk-stall scenario's measuring side):
//
//   hostile_guest echo-probe SOCKET LOG IDLE_S FLOOD_S
//     connects to kvmmio's console socket (--console ...,socket=SOCKET),
//     copies everything the guest prints to LOG, waits for L2's
//     KVMMIO-L2-ECHO-READY, then sends "PING i N" lines every 50 ms for
//     IDLE_S seconds, which L2 echoes back, and measures each round trip
//     (EchoProbe::phase says how a slow one counts); then sends
//     KVMMIO-START-FLOOD (L2 starts the disk mode), waits for its first
//     line, and measures FLOOD_S seconds more the same way. It prints one
//     line per phase: "echo PHASE n=SAMPLES pings=N lost=L p50_ms=..
//     p99_ms=.. max_ms=..". Status 0 when both phases ran, 1 if L2 never
//     got ready or never flooded.
//     C++ rather than busybox sh because the measurement wants
//     sub-millisecond timestamps and no process start per sample.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "vmm/boot/memory_map_arm64.h"

namespace {

// kvmmio's virtio-mmio slots: a register window at the start of each 64
// KiB (each has a host page of its own for the register mirror).
constexpr uint64_t kSlotBase = kvmmio::vmm::layout::kVirtioMmioBase;
constexpr uint64_t kSlotStride = kvmmio::vmm::layout::kVirtioMmioSlotStride;
constexpr unsigned kSlots = 8;

// virtio-mmio registers (virtio 1.2, 4.2.2).
enum : uint32_t {
  kMagic = 0x000, kVersion = 0x004, kDeviceId = 0x008, kDeviceFeatures = 0x010, kDeviceFeaturesSel = 0x014,
  kDriverFeatures = 0x020, kDriverFeaturesSel = 0x024, kQueueSel = 0x030, kQueueNumMax = 0x034, kQueueNum = 0x038,
  kQueueReady = 0x044, kQueueNotify = 0x050, kInterruptStatus = 0x060, kInterruptAck = 0x064,
  kStatus = 0x070, kQueueDescLow = 0x080, kQueueDescHigh = 0x084, kQueueDriverLow = 0x090,
  kQueueDriverHigh = 0x094, kQueueDeviceLow = 0x0a0, kQueueDeviceHigh = 0x0a4, kConfig = 0x100,
};
constexpr uint32_t kAck = 1, kDriver = 2, kDriverOk = 4, kFeaturesOk = 8;
constexpr uint32_t kNeedsReset = 0x40;
constexpr uint16_t kNext = 1, kWrite = 2, kIndirect = 4;
constexpr uint16_t kAvailNoInterrupt = 1;
constexpr unsigned kFMrgRxbuf = 15, kFIndirectDesc = 28, kFEventIdx = 29, kFVersion1 = 32;
// virtio-blk (virtio 1.2, 5.2): feature bits, configuration offsets,
// request types.
constexpr unsigned kFBlkSizeMax = 1, kFBlkSegMax = 2, kFBlkMq = 12;
constexpr uint32_t kBlkCapacity = 0, kBlkSizeMax = 8, kBlkSegMax = 12, kBlkNumQueuesWord = 32;
constexpr uint32_t kBlkTIn = 0, kBlkTOut = 1;

// Each slot's register window, or nullptr where /dev/mem refused it (a
// device a driver still holds: the disk mode leaves the console bound).
volatile uint8_t* g_slot[kSlots];
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

uint64_t device_features(const Device& d) {
  uint64_t f = 0;
  for (uint32_t sel = 0; sel < 2; ++sel) {
    d.write(kDeviceFeaturesSel, sel);
    f |= uint64_t{d.read(kDeviceFeatures)} << (32 * sel);
  }
  return f;
}

// The device windows and the reserved RAM, through /dev/mem; false (with
// a message) if they cannot be mapped.
bool map_guest(const char* base, const char* size, uint64_t need, uint64_t& ram_size) {
  g_ram_gpa = number(base);
  ram_size = number(size);
  if (ram_size < need) {
    std::fprintf(stderr, "hostile_guest: needs %llu MiB of reserved RAM\n", (unsigned long long)(need >> 20));
    return false;
  }
  const int mem = ::open("/dev/mem", O_RDWR | O_SYNC);
  if (mem < 0) return std::perror("/dev/mem"), false;
  void* r = ::mmap(nullptr, ram_size, PROT_READ | PROT_WRITE, MAP_SHARED, mem, static_cast<off_t>(g_ram_gpa));
  if (r == MAP_FAILED) return std::perror("mmap /dev/mem (the reserved RAM)"), false;
  g_ram = static_cast<volatile uint8_t*>(r);
  for (unsigned s = 0; s < kSlots; ++s) {
    void* m = ::mmap(nullptr, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED, mem,
                     static_cast<off_t>(kSlotBase + s * kSlotStride));
    g_slot[s] = m == MAP_FAILED ? nullptr : static_cast<volatile uint8_t*>(m);
  }
  return true;
}

// The p-quantile (0 < p <= 1) of `v` by nearest rank; 0 when empty.
double quantile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1)];
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The console, both nets and the storm (the hostile-guest scenario).
int flood_all(const char* base, const char* size) {
  uint64_t ram_size = 0;
  if (!map_guest(base, size, 96u << 20, ram_size)) return 1;

  // The devices by ID, in slot order: the first net floods, the second
  // storms, the console floods.
  Device net{}, storm{}, console{};
  for (unsigned s = 0; s < kSlots; ++s) {
    if (!g_slot[s]) continue;
    Device d{g_slot[s]};
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

// The disk mode: see the header. Layout of the reserved RAM: the rings of
// queue q at q * 0x4000 (up to 16 queues), the two indirect tables (IN,
// OUT) at 0x40000 and 0x41000, the two request headers and status bytes
// at 0x42000, the one data buffer every segment names from 1 MiB on.
int flood_disk(const char* base, const char* size, const char* hold) {
  uint64_t ram_size = 0;
  if (!map_guest(base, size, 8u << 20, ram_size)) return 1;
  const auto hold_time = std::chrono::milliseconds(hold ? number(hold) : 100);
  Device disk{};
  for (unsigned s = 0; s < kSlots && !disk.regs; ++s) {
    if (!g_slot[s]) continue;
    Device d{g_slot[s]};
    if (d.read(kMagic) == 0x74726976 && d.read(kVersion) == 2 && d.read(kDeviceId) == 2) disk = d;
  }
  if (!disk.regs) return std::fprintf(stderr, "hostile_guest: wants a virtio-blk device (modern)\n"), 1;

  disk.write(kStatus, 0);
  const uint64_t offered = device_features(disk);
  const auto has = [offered](unsigned b) { return (offered >> b) & 1; };
  if (!has(kFVersion1) || !has(kFIndirectDesc))
    return std::fprintf(stderr, "hostile_guest: the disk offers no VERSION_1 or INDIRECT_DESC\n"), 1;
  uint64_t features = (1ull << kFVersion1) | (1ull << kFIndirectDesc);
  const uint64_t capacity =
      (uint64_t{disk.read(kConfig + kBlkCapacity + 4)} << 32 | disk.read(kConfig + kBlkCapacity)) * 512;
  uint32_t queues = 1;
  if (has(kFBlkMq)) {
    features |= 1ull << kFBlkMq;
    queues = std::clamp<uint32_t>(disk.read(kConfig + kBlkNumQueuesWord) >> 16, 1, 16);
  }
  uint32_t size_max = 0, seg_max = 0;
  if (has(kFBlkSizeMax)) {
    features |= 1ull << kFBlkSizeMax;
    size_max = disk.read(kConfig + kBlkSizeMax);
  }
  if (has(kFBlkSegMax)) {
    features |= 1ull << kFBlkSegMax;
    seg_max = disk.read(kConfig + kBlkSegMax);
  }
  uint16_t qsize = 256;
  for (uint32_t q = 0; q < queues; ++q) {
    disk.write(kQueueSel, q);
    qsize = static_cast<uint16_t>(std::min<uint32_t>(qsize, disk.read(kQueueNumMax)));
  }
  if (qsize < 4) return std::fprintf(stderr, "hostile_guest: the disk's queues hold %u entries\n", qsize), 1;

  // The largest request: seg_max segments (a chain holds at most the
  // queue size: header, segments, status) of size_max bytes (4 MiB
  // where none is offered), each a whole number of 4 KiB pages (the
  // block size of any image), no more than the capacity from sector 0,
  // the buffer (the reserved RAM past 1 MiB), or a chain's 4 GiB.
  uint64_t segs = std::min<uint64_t>(seg_max ? seg_max : qsize - 2u, qsize - 2u);
  uint64_t seg_len = size_max ? size_max : 4u << 20;
  seg_len = std::min<uint64_t>(seg_len, ram_size - (1u << 20));
  if (seg_len >= 4096) seg_len &= ~uint64_t{4095};
  else seg_len &= ~uint64_t{511};
  const uint64_t max_bytes = std::min<uint64_t>(capacity, 0xffffffffull - 4096);
  if (segs * seg_len > max_bytes) {
    if (size_max) segs = std::max<uint64_t>(1, max_bytes / seg_len);  // keep size_max: fewer segments
    else seg_len = std::max<uint64_t>(4096, max_bytes / segs & ~uint64_t{4095});
  }
  const uint64_t request_bytes = segs * seg_len;

  constexpr uint64_t kTables = 0x40000, kHeaders = 0x42000, kData = 1u << 20;
  for (int t = 0; t < 2; ++t) {  // IN, then OUT; each header, segs data, status
    const uint64_t table = kTables + 0x1000u * t, header = kHeaders + 16u * t;
    at<uint32_t>(header) = t ? kBlkTOut : kBlkTIn;
    at<uint32_t>(header + 4) = 0;
    at<uint64_t>(header + 8) = 0;  // sector 0
    const auto put = [table](uint64_t i, uint64_t addr, uint64_t len, uint16_t flags) {
      at<uint64_t>(table + 16 * i) = g_ram_gpa + addr;
      at<uint32_t>(table + 16 * i + 8) = static_cast<uint32_t>(len);
      at<uint16_t>(table + 16 * i + 12) = flags;
      at<uint16_t>(table + 16 * i + 14) = static_cast<uint16_t>(i + 1);
    };
    put(0, header, 16, kNext);
    for (uint64_t i = 1; i <= segs; ++i) put(i, kData, seg_len, static_cast<uint16_t>(kNext | (t ? 0 : kWrite)));
    put(segs + 1, kHeaders + 0x100 + t, 1, kWrite);
  }
  const uint32_t table_len = static_cast<uint32_t>(16 * (segs + 2));

  std::vector<Ring> rings;
  for (uint32_t q = 0; q < queues; ++q) rings.push_back(Ring{0x4000u * q, qsize});
  std::printf("KVMMIO-L2-DISK-STALL: flooding %u queues of %u entries, requests of %llu x %llu bytes "
              "(%llu MiB; size_max %u, seg_max %u, capacity %llu MiB), hold %lld ms\n",
              queues, qsize, (unsigned long long)segs, (unsigned long long)seg_len,
              (unsigned long long)(request_bytes >> 20), size_max, seg_max, (unsigned long long)(capacity >> 20),
              (long long)hold_time.count());
  std::fflush(stdout);

  uint64_t cycles = 0, refused = 0, posted = 0, completed = 0;
  // Every reset's duration, for its median and p90: a device that waits
  // for the requests in flight makes most resets slow, a host's hiccup
  // only a few. Bounded: past kResetSamples only the maximum moves.
  constexpr size_t kResetSamples = 65536;
  std::vector<double> resets;
  double reset_max = 0, reset_last = 0;
  auto last = std::chrono::steady_clock::now();
  for (;;) {
    if (cycles) {
      // The reset under test: with every queue full of the largest
      // requests, most of them in flight.
      const auto t = std::chrono::steady_clock::now();
      disk.write(kStatus, 0);
      reset_last = ms_since(t);
      reset_max = std::max(reset_max, reset_last);
      if (resets.size() < kResetSamples) resets.push_back(reset_last);
    }
    ++cycles;
    for (Ring& r : rings) r.zero();
    if (!negotiate(disk, features)) return std::fprintf(stderr, "hostile_guest: the disk refused its features\n"), 1;
    for (uint32_t q = 0; q < queues; ++q) set_queue(disk, q, rings[q]);
    driver_ok(disk);
    if (disk.read(kStatus) & kNeedsReset) {  // the activation rate limit: wait a little
      ++refused;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    // Heads alternate IN and OUT; every avail entry is its own head.
    for (uint32_t q = 0; q < queues; ++q) {
      Ring& r = rings[q];
      at<uint16_t>(r.avail()) = kAvailNoInterrupt;
      for (uint16_t i = 0; i < qsize; ++i)
        r.set_desc(i, kTables + 0x1000u * (i & 1), table_len, kIndirect, 0);
      for (uint16_t i = 0; i < qsize; ++i) at<uint16_t>(r.avail() + 4 + 2u * i) = i;
      r.avail_idx = qsize;
      barrier();
      at<uint16_t>(r.avail() + 2) = r.avail_idx;
      barrier();
      disk.write(kQueueNotify, q);
      posted += qsize;
    }
    // Refill: each completed head goes back into the ring.
    std::vector<uint16_t> seen(queues, 0);
    const auto cycle_start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - cycle_start < hold_time) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      for (uint32_t q = 0; q < queues; ++q) {
        Ring& r = rings[q];
        const uint16_t used = r.used_idx();
        const uint16_t back = static_cast<uint16_t>(used - seen[q]);
        if (!back) continue;
        for (uint16_t k = 0; k < back; ++k) {
          const uint16_t head = at<uint16_t>(r.used() + 4 + 8u * ((seen[q] + k) % qsize));
          at<uint16_t>(r.avail() + 4 + 2u * ((r.avail_idx + k) % qsize)) = head;
        }
        seen[q] = used;
        completed += back;
        r.avail_idx = static_cast<uint16_t>(r.avail_idx + back);
        barrier();
        at<uint16_t>(r.avail() + 2) = r.avail_idx;
        barrier();
        disk.write(kQueueNotify, q);
        posted += back;
      }
    }
    if (ms_since(last) >= 3000) {
      last = std::chrono::steady_clock::now();
      std::printf("KVMMIO-L2-DISK-STALL: cycles %llu (%llu bring-ups refused), requests posted %llu, "
                  "completed %llu, resets %zu: p50 %.1f ms, p90 %.1f ms, max %.1f ms (last %.1f ms)\n",
                  (unsigned long long)cycles, (unsigned long long)refused, (unsigned long long)posted,
                  (unsigned long long)completed, resets.size(), quantile(resets, 0.50), quantile(resets, 0.90),
                  reset_max, reset_last);
      std::fflush(stdout);
    }
  }
}

// Runs the calling thread (and what it forks) on `cpu` only, where L2 has it.
void pin_to_cpu(int cpu) {
  if (cpu >= ::sysconf(_SC_NPROCESSORS_ONLN)) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) std::perror("hostile_guest: sched_setaffinity");
}

// The disk-stall scenario's L2 side: see the header.
int echo_loop(const char* base, const char* size) {
  pin_to_cpu(0);
  std::printf("KVMMIO-L2-ECHO-READY\n");
  std::fflush(stdout);
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    // The bytes as they came (a terminal in canonical mode reads a line
    // at a time): one write per read.
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(1, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return 1;
      done += w;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        if (buf[i] != '\r' && line.size() < 256) line += buf[i];
        continue;
      }
      if (line == "KVMMIO-START-FLOOD" && ::fork() == 0) {
        pin_to_cpu(1);
        flood_disk(base, size, nullptr);
        std::printf("hostile_guest: the disk flood ended\n");
        std::fflush(stdout);
        _exit(1);
      }
      line.clear();
    }
  }
}

// The echo probe (runs in L1): see the header.
class EchoProbe {
 public:
  EchoProbe(int fd, FILE* log) : fd_(fd), log_(log) {}

  // Reads what the guest printed for up to `ms`, logging it and timing
  // echoes; true once a line containing `marker` arrived (nullptr: returns
  // after the first read). Fails (false) early on a line with
  // `abort_marker`.
  bool pump(double ms, const char* marker, const char* abort_marker = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const double left = ms - ms_since(start);
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::ceil(left))) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) {
        std::fprintf(stderr, "echo-probe: the console socket closed\n");
        closed_ = true;
        return false;
      }
      std::fwrite(buf, 1, static_cast<size_t>(n), log_);
      std::fflush(log_);
      bool hit = false, abort = false;
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] != '\n') {
          if (buf[i] != '\r' && line_.size() < 4096) line_ += buf[i];
          continue;
        }
        if (marker && line_.find(marker) != std::string::npos) hit = true;
        if (abort_marker && line_.find(abort_marker) != std::string::npos) abort = true;
        echoed(line_);
        line_.clear();
      }
      if (hit) return true;
      if (abort || closed_ || !marker) return false;  // no marker: back to the caller with what came
    }
  }

  void send(const std::string& line) {
    const std::string l = line + "\n";
    if (::write(fd_, l.data(), l.size()) != static_cast<ssize_t>(l.size())) closed_ = true;
  }

  // One phase of `seconds`: a ping every 50 ms, the next one sent only
  // once the last came back (so the probe's own pings never queue up
  // behind a slow echo path and inflate each other), each echo's round
  // trip a sample; an echo that takes R ms also stands for the pings an
  // open-loop sender would have sent meanwhile, one sample each of R - 50,
  // R - 100, ... ms (the correction HdrHistogram makes for coordinated
  // omission), so a stall of S seconds counts as S / 50 ms samples, as
  // long as they were. An echo not back 2 s after the phase counts as
  // lost, its wait a sample. Prints the phase's line; false if the socket
  // closed.
  bool phase(const char* name, int seconds) {
    constexpr double kPeriodMs = 50;
    sent_.clear();
    rtt_.clear();
    tag_ = std::string("PING ") + name[0] + " ";
    const auto start = std::chrono::steady_clock::now();
    const double limit_ms = seconds * 1000.0 + 2000;
    std::vector<double> all;
    uint64_t pings = 0, lost = 0;
    while (!closed_ && ms_since(start) < seconds * 1000.0) {
      const uint64_t seq = pings++;
      const auto sent = std::chrono::steady_clock::now();
      sent_[seq] = sent;
      send(tag_ + std::to_string(seq));
      while (!closed_ && !rtt_.count(seq) && ms_since(start) < limit_ms) pump(limit_ms - ms_since(start), nullptr);
      double r = ms_since(sent);
      if (const auto it = rtt_.find(seq); it != rtt_.end()) r = it->second;
      else ++lost;
      all.push_back(r);
      for (double missed = r - kPeriodMs; missed > 0; missed -= kPeriodMs) all.push_back(missed);
      while (!closed_ && ms_since(sent) < kPeriodMs) pump(kPeriodMs - ms_since(sent), nullptr);
    }
    std::printf("echo %s n=%zu pings=%llu lost=%llu p50_ms=%.1f p99_ms=%.1f max_ms=%.1f\n", name, all.size(),
                (unsigned long long)pings, (unsigned long long)lost, quantile(all, 0.50), quantile(all, 0.99),
                quantile(all, 1.0));
    std::fflush(stdout);
    return !closed_;
  }

 private:
  void echoed(const std::string& line) {
    if (tag_.empty()) return;
    const size_t pos = line.find(tag_);
    if (pos == std::string::npos) return;
    const uint64_t seq = std::strtoull(line.c_str() + pos + tag_.size(), nullptr, 10);
    const auto s = sent_.find(seq);
    if (s != sent_.end() && !rtt_.count(seq)) rtt_[seq] = ms_since(s->second);
  }

  int fd_;
  FILE* log_;
  bool closed_ = false;
  std::string line_;
  std::string tag_;  // "PING i " in this phase
  std::map<uint64_t, std::chrono::steady_clock::time_point> sent_;
  std::map<uint64_t, double> rtt_;
};

int echo_probe(const char* socket_path, const char* log_path, int idle_s, int flood_s) {
  FILE* log = std::fopen(log_path, "w");
  if (!log) return std::perror(log_path), 1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path);
  int fd = -1;
  // kvmmio creates the socket at start-up: the first attempts may precede it.
  for (int i = 0; i < 600; ++i) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) break;
    if (fd >= 0) ::close(fd);
    fd = -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (fd < 0) return std::fprintf(stderr, "echo-probe: cannot connect to %s\n", socket_path), 1;
  EchoProbe probe(fd, log);
  // L2's boot under TCG: well under a minute; 5 minutes for a loaded host.
  if (!probe.pump(300000, "KVMMIO-L2-ECHO-READY", "KVMMIO-L2-HOOK:"))
    return std::fprintf(stderr, "echo-probe: L2 never said KVMMIO-L2-ECHO-READY\n"), 1;
  // A second for the echo loop's first page faults and the first reads.
  probe.send("PING w 0");
  for (const auto t = std::chrono::steady_clock::now(); ms_since(t) < 1000;) probe.pump(1000 - ms_since(t), nullptr);
  if (!probe.phase("idle", idle_s)) return 1;
  probe.send("KVMMIO-START-FLOOD");
  if (!probe.pump(60000, "KVMMIO-L2-DISK-STALL: flooding", "hostile_guest:"))
    return std::fprintf(stderr, "echo-probe: L2 never started flooding the disk\n"), 1;
  if (!probe.phase("flood", flood_s)) return 1;
  std::fclose(log);
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && argc <= 5 && std::strcmp(argv[1], "disk") == 0)
    return flood_disk(argv[2], argv[3], argc == 5 ? argv[4] : nullptr);
  if (argc == 4 && std::strcmp(argv[1], "echo") == 0) return echo_loop(argv[2], argv[3]);
  if (argc == 6 && std::strcmp(argv[1], "echo-probe") == 0)
    return echo_probe(argv[2], argv[3], std::atoi(argv[4]), std::atoi(argv[5]));
  if (argc == 3) return flood_all(argv[1], argv[2]);
  std::fprintf(stderr,
               "usage: hostile_guest RESERVED_BASE RESERVED_SIZE\n"
               "       hostile_guest disk RESERVED_BASE RESERVED_SIZE [HOLD_MS]\n"
               "       hostile_guest echo RESERVED_BASE RESERVED_SIZE\n"
               "       hostile_guest echo-probe SOCKET LOG IDLE_S FLOOD_S\n");
  return 2;
}
