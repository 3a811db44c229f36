// SPDX-License-Identifier: BSD-2-Clause
// VirtioRng: the virtio entropy device (virtio 1.2 section 5.4, device ID 4)
// that Linux's virtio_rng binds as a hw_random source (/dev/hwrng,
// rng_current = virtio_rng.N).
//
// One request queue (5.4.2), no device feature bits (5.4.3), no
// configuration space (5.4.4). Each chain the driver posts is one request:
// its device-writable buffers are filled with bytes from getrandom(2),
// straight into guest RAM through the chain's checked host spans
// (chain_host_spans(), GuestMemory::span()), and returned with the count
// written (5.4.6.1: one or more bytes; fewer than the buffer holds is
// allowed, and Linux asks again).
//
// Bounds, so a guest cannot make the VMM burn CPU or drain the host's
// entropy pool faster than the bound:
//  - Rate: a TokenBucket of bytes, RngOptions::bytes_per_second (default
//    1 MiB/s) with a burst of RngOptions::burst_bytes (default 64 KiB).
//    When it is empty the chain at the head waits (QueueDrain's paused
//    chain, notifies suppressed) and a one-shot timerfd on the event loop
//    resumes the drain when the bucket holds that chain's bytes again
//    (throttled counts the waits). A request is served whole or waits;
//    one request gets at most the burst (and one dispatch's bytes).
//  - Work per dispatch (a notify, the timer, a resumption): at most
//    kChainsPerDispatch chains and kBytesPerDispatch bytes, then the rest
//    is re-queued on the event loop (DeferredWork, budget_yields).
// A chain with device-readable buffers breaks 5.4.6 ("the driver MUST
// NOT place device-readable buffers"): a guest error, logged rate-limited
// (GuestErrorLog) and counted (refused), and the chain is returned with 0
// bytes; the device goes on serving the queue, as virtio-blk does with a
// malformed request. The ring's own checks (buffers outside RAM, loops)
// are SplitQueue's, reported by the transport.
//
// Threads: every call holds the device lock (the transport's callbacks,
// the timer's and the resumption's DeviceLock::Watch). The timerfd is made
// at activation (a vCPU thread: timerfd_create) and armed from whichever
// thread serves the queue (timerfd_settime); reset() closes it, so no
// timer stays armed past a reset. Counters are atomics, read from any
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/deferred_work.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/token_bucket.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/descriptor_chain.h"
#include "kvmmio/virtio/queue_drain.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::rng {

struct KVMMIO_EXPORT RngOptions {
  // The rate bound: bytes per second over time, and at most burst_bytes
  // at once. Both at least 1.
  uint64_t bytes_per_second = 1 << 20;
  uint64_t burst_bytes = 64 << 10;
  // Where the bucket reads the time (TokenBucket::TimeSource); empty: the
  // steady clock. Tests pass a clock they move by hand.
  TokenBucket::TimeSource clock = {};
};

// The device's settings, for --stats.
#define KVMMIO_RNG_SETTINGS(C)                                                      \
  C(rate_bytes_per_second, "the rate bound: random bytes served per second, at most") \
  C(burst_bytes, "random bytes served at once before the rate bound applies, at most")
struct KVMMIO_EXPORT RngSettings {
  KVMMIO_RNG_SETTINGS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_RNG_SETTINGS)
};

// What the device did.
#define KVMMIO_RNG_COUNTERS(C)                                                                \
  C(bytes_served, "random bytes (getrandom) written into guest buffers")                    \
  C(requests, "requestq chains returned to the driver, refused ones included")               \
  C(throttled, "times a request waited for the rate bound (a timer resumed it)")            \
  C(refused, "requestq chains with device-readable buffers, returned with 0 bytes (guest errors)") \
  C(budget_yields, "times the requestq stopped at its work budget per dispatch and left "   \
                   "the rest to a later turn of the event loop")                            \
  C(activations, "DRIVER_OK count (driver resets + 1)")
struct KVMMIO_EXPORT RngCounters {
  KVMMIO_RNG_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_RNG_COUNTERS)
};

class KVMMIO_EXPORT VirtioRng final : public virtio::VirtioDevice {
 public:
  static constexpr uint32_t kDeviceId = 4;
  static constexpr uint32_t kRequestQueue = 0;
  static constexpr uint16_t kQueueSize = 64;
  // Work budget per dispatch (docs/security.md, "Budgets and bounds").
  static constexpr unsigned kChainsPerDispatch = 64;
  static constexpr uint64_t kBytesPerDispatch = 64 * 1024;

  // `loop` runs the rate timer and the resumptions. Throws
  // std::invalid_argument for a zero rate or burst.
  VirtioRng(const GuestMemory& memory, EventLoop& loop, RngOptions options = {});
  ~VirtioRng() override;
  VirtioRng(const VirtioRng&) = delete;
  VirtioRng& operator=(const VirtioRng&) = delete;

  const RngCounters& counters() const { return counters_; }
  const RngSettings& settings() const { return settings_; }
  // Whether a request waits for the rate bound (its timer armed). Under
  // the device lock.
  bool waiting_for_tokens() const { return waiting_; }

  uint64_t guest_errors() const override { return errors_.count(); }
  // RngSettings, then RngCounters.
  void visit_counters(const virtio::CounterVisitor& visit) const override;

  // VirtioDevice
  uint32_t device_id() const override { return kDeviceId; }
  uint64_t device_features() const override { return 0; }
  uint32_t num_queues() const override { return 1; }
  uint16_t queue_max_size(uint32_t) const override { return kQueueSize; }
  bool activate(const virtio::DeviceActivation& activation) override;
  void queue_notify(uint32_t queue) override;
  void enable_queue(const virtio::ActiveQueue& queue) override;
  void reset() override;

 private:
  // Everything below is guarded by the device lock.
  void serve();
  virtio::ChainStep serve_chain(const virtio::DescriptorChain& chain, uint64_t bytes_left);
  // Fills the first `len` writable bytes of `chain`; returns what it wrote.
  uint64_t fill(const virtio::DescriptorChain& chain, uint64_t len);
  // Arms the timer for when `bytes` tokens are there.
  void wait_for_tokens(uint64_t bytes);
  void on_timer();

  const GuestMemory& memory_;
  EventLoop& loop_;
  RngSettings settings_;
  RngCounters counters_;
  GuestErrorLog errors_{"virtio-rng"};
  TokenBucket bucket_;  // outlives resets: a reset storm earns no new burst

  // Between activate() and reset():
  virtio::VirtioInterrupt* interrupt_ = nullptr;
  virtio::QueueDrain drain_;
  bool waiting_ = false;        // the drain's paused chain waits for the timer
  bool wait_counted_ = false;   // ... and is counted in throttled
  std::vector<std::span<uint8_t>> spans_;  // reused by fill()
  UniqueFd timer_;                          // one-shot timerfd, CLOCK_MONOTONIC
  std::unique_ptr<DeferredWork> resume_;    // the drain past its budget
  DeviceLock::Watch timer_watch_;           // last: dropped first
};

}  // namespace kvmmio::rng
