// SPDX-License-Identifier: BSD-2-Clause
// VirtioBlock: the virtio-blk device (virtio 1.2 section 5.2, device ID 2)
// on a raw image (DiskImage), with one request queue or several
// (BlockDeviceOptions::queues; VIRTIO_BLK_F_MQ and num_queues offered when
// more than one, and Linux then makes min(num_queues, CPUs) queues).
//
// Features: SIZE_MAX, SEG_MAX, BLK_SIZE, FLUSH, RO (ro=on), DISCARD and
// WRITE_ZEROES (where DiskImage's probe found fallocate working), and
// GET_ID (the serial; no feature bit). The capacity is in the
// configuration space.
//
// Data path: the guest's notify (the queue's ioeventfd, polled by the
// event loop, or a trapped QueueNotify) runs queue_notify() under the
// device lock. It pops chains (QueueDrain, at most kChainsPerDispatch per
// dispatch, then DeferredWork), checks each (parse_request) and hands the
// request to the queue's I/O engine (IoEngine): no I/O on a vCPU or the
// event loop. The engine is io_uring (UringWorker: a restricted ring, its
// completions reaped on the engine's thread) unless engine=threads or the
// ring cannot be set up; then it is a worker thread with blocking calls
// (IoWorker); every queue of a disk has the same one, and
// settings().io_uring says which runs. A request refused by the checks is
// answered at once (IOERR or UNSUPP) and counted as a guest error
// (GuestErrorLog: rate-limited). The engine reads and writes guest RAM
// through the chain's checked spans, writes the status byte after the I/O
// (a FLUSH's after fdatasync returned), then, under the device lock,
// returns the chain as used and raises the interrupt through the
// transport (irqfd) when the driver wants one and no further request of
// that queue is waiting.
//
// Queues: each has its own drain, in-flight count and bound, budget
// (DeferredWork), engine (its own ring or worker thread, named
// thread_name + "q<N>" when there are several) and, with cache=none,
// bounce buffer; its completions come back to it (IoJob::queue) and raise
// the device's one interrupt. The counters are the device's (atomics).
// The spec orders nothing across queues (a driver relies on a request
// only once it completed), and neither does the device: a FLUSH waits for
// the earlier requests of its own queue, and its fdatasync covers whatever
// any queue had written to the image by then.
//
// Bounds: an IN/OUT request carries at most kMaxRequestBytes of data (a
// larger one is refused: IOERR, a guest error), whatever its segments
// (they may alias one buffer); size_max x seg_max is that bound, so Linux
// never builds a larger one. Per queue, at most kMaxInFlight requests and
// kMaxInFlightBytes of their data are handed to the engine and not yet
// given back; at either bound the queue's drain pauses with notifies
// suppressed (the chains stay in the guest's ring, counted in
// inflight_waits) and the next request given back resumes it. The
// guest's ring (kQueueSize) is larger, so a guest cannot make a queue
// hold more, nor a device more than queues x kMaxInFlightBytes of I/O
// (16 x 8 MiB = 128 MiB): the most a teardown ever waits for.
//
// Reset (status 0) never waits for I/O under the device lock: it moves
// the activation's generation, drops the requests not started (their
// budget given back), and returns. Requests the engines already run end
// off the lock; their status bytes are not written and their completions
// are discarded: nothing of the old activation touches the rings. They
// keep their share of the in-flight bounds until they end, so a driver
// that resets in a loop cannot pile up work, and the next activation's
// requests wait for them in the engine (a stale write never lands after a
// newer one). A completion waiting for the device lock gives up when a
// reset starts, and the reset waits for such completions to leave (about
// a millisecond, DeviceLock::lock_unless), so after reset() returns
// nothing touches the lock, which may go with the transport. The
// destructor waits, off the lock, for what the kernel still holds (guest
// memory must stay mapped meanwhile): bounded by kMaxInFlightBytes per
// queue.
//
// Errors of the image (EIO, ENOSPC, ...) answer IOERR, are counted
// (io_errors) and logged with the image's path, rate-limited (LogLimit).
//
// Each engine's thread confines itself (`on_io_thread_start`, e.g.
// kvmmio's seccomp class "block-io", or `on_uring_thread_start`,
// "block-uring") when it takes its first request: the guest runs only
// after the machine is set up, so that is after the VMM has dropped its
// privileges. One thread failing to confine itself makes every queue
// answer IOERR.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/deferred_work.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/block/block_request.h"
#include "kvmmio/block/disk_image.h"
#include "kvmmio/block/disk_options.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/queue_drain.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::block {

// Fixed at start; read by the VMM's stats output.
#define KVMMIO_BLOCK_SETTINGS(C)                                                        \
  C(capacity_sectors, "the disk's size in 512-byte sectors")                           \
  C(read_only, "1 with ro=on: VIRTIO_BLK_F_RO offered, writes refused")                \
  C(cache_none, "1 with cache=none: the image is opened O_DIRECT")                     \
  C(block_size, "the logical block size offered (VIRTIO_BLK_F_BLK_SIZE)")              \
  C(discard_offered, "1 if DISCARD is offered (fallocate punch-hole works on the image)") \
  C(write_zeroes_offered, "1 if WRITE_ZEROES is offered (fallocate zero-range works)")  \
  C(queues, "request queues offered (num_queues; VIRTIO_BLK_F_MQ when more than 1)")    \
  C(max_in_flight, "requests per queue popped and not yet completed, at most")           \
  C(max_in_flight_bytes, "data bytes per queue popped and not yet completed, at most")   \
  C(max_request_bytes, "data bytes per IN/OUT request, at most (size_max x seg_max)")   \
  C(io_uring, "1 if the io_uring engine runs, 0 for the threads engine (engine=threads, or the ring could not be set up)")
struct KVMMIO_EXPORT BlockSettings {
  KVMMIO_BLOCK_SETTINGS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_BLOCK_SETTINGS)
};

// What the device did.
#define KVMMIO_BLOCK_COUNTERS(C)                                                             \
  C(reads, "IN requests completed")                                                         \
  C(writes, "OUT requests completed")                                                       \
  C(flushes, "FLUSH requests completed (each after fdatasync returned)")                    \
  C(get_ids, "GET_ID requests completed")                                                   \
  C(discards, "DISCARD requests completed")                                                 \
  C(write_zeroes, "WRITE_ZEROES requests completed")                                        \
  C(bytes_read, "bytes read from the image into guest buffers")                             \
  C(bytes_written, "bytes written from guest buffers to the image")                         \
  C(io_errors, "requests the host failed (EIO, ENOSPC, ...): answered IOERR")               \
  C(refused, "requests refused before any I/O (guest errors): answered IOERR or UNSUPP")    \
  C(inflight_waits, "times a queue paused at max_in_flight or max_in_flight_bytes until a "  \
                    "request completed")                                                   \
  C(budget_yields, "times a dispatch stopped at its work budget and left the rest to a "    \
                   "later turn of the event loop")                                          \
  C(activations, "DRIVER_OK count (driver resets + 1)")
struct KVMMIO_EXPORT BlockCounters {
  KVMMIO_BLOCK_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_BLOCK_COUNTERS)
};

class IoEngine;
struct IoJob;
struct IoOutcome;
struct BounceBuffer;

struct KVMMIO_EXPORT BlockDeviceOptions {
  std::string serial;                       // GET_ID's answer (at most 20 bytes)
  // The engine threads' name; with several queues, queue N's thread is
  // this name + "qN" (at most 15 bytes are kept: kvmmio-blk0q15 fits).
  std::string thread_name = "kvmmio-blk";
  // Request queues, 1 to VirtioBlock::kMaxQueues (else std::invalid_argument).
  unsigned queues = 1;
  std::function<void()> on_io_thread_start;  // runs on the threads engine's worker before its first request
  std::function<void()> on_uring_thread_start;  // runs on the io_uring engine's thread before its first request
  // kIoUring: a ring that cannot be set up is an error (UserError); kDefault
  // falls back to threads with one warning.
  EngineChoice engine = EngineChoice::kDefault;
  // Tests only: runs on an engine's thread just before a request's I/O
  // starts (to hold it there).
  std::function<void(const BlockRequest&)> before_io;
  // Tests only: the io_uring engine calls it before each
  // io_uring_submit_and_wait; a negative errno it returns stands for the
  // call's result (0: the call is made).
  std::function<int()> uring_submit_fault;
};

class KVMMIO_EXPORT VirtioBlock final : public virtio::VirtioDevice {
 public:
  static constexpr uint32_t kDeviceId = 2;
  static constexpr uint16_t kQueueSize = 256;
  // The data of one IN/OUT request, at most: what a reset's leftover or a
  // teardown waits for is counted in these.
  static constexpr uint64_t kMaxRequestBytes = 4 << 20;
  // size_max: Linux takes it as the largest segment, but never below its
  // page size (blk_queue_max_segment_size), which is 64 KiB on some arm64
  // guests; so it is 64 KiB, and seg_max is what keeps size_max x seg_max
  // within kMaxRequestBytes for every guest page size. A 4 KiB-page guest
  // with scattered pages sends up to 256 KiB per request, more where its
  // pages are contiguous.
  static constexpr uint32_t kSizeMax = 64 << 10;
  static constexpr uint32_t kSegMax = kMaxRequestBytes / kSizeMax;
  static_assert(uint64_t{kSizeMax} * kSegMax <= kMaxRequestBytes);
  static_assert(kSegMax <= kQueueSize - 2, "with the header and status descriptors, a chain fits the ring");
  static constexpr unsigned kMaxInFlight = 64;  // requests per queue
  // Data bytes per queue handed to the engine and not yet given back (two
  // of the largest requests, or many smaller ones).
  static constexpr uint64_t kMaxInFlightBytes = 2 * kMaxRequestBytes;
  static constexpr unsigned kMaxQueues = kMaxDiskQueues;
  static constexpr unsigned kChainsPerDispatch = 64;
  // The largest DISCARD/WRITE_ZEROES range offered, in sectors (1 GiB).
  static constexpr uint32_t kMaxRangeSectors = 1u << 21;

  VirtioBlock(const GuestMemory& memory, EventLoop& loop, DiskImage disk, BlockDeviceOptions options = {});
  ~VirtioBlock() override;
  VirtioBlock(const VirtioBlock&) = delete;
  VirtioBlock& operator=(const VirtioBlock&) = delete;

  const BlockCounters& counters() const { return counters_; }
  const BlockSettings& settings() const { return settings_; }
  const DiskImage& disk() const { return disk_; }
  // "io_uring" or "threads": the engine that runs.
  const char* engine_name() const;
  // Requests popped and not yet completed, on every queue or on `queue`
  // (for tests and the fuzzer, which wait for the engines to go idle).
  unsigned requests_in_flight() const;
  // Requests of an activation that was reset count until their I/O ended.
  unsigned requests_in_flight(uint32_t queue) const;
  // Their data bytes (at most kMaxInFlightBytes per queue).
  uint64_t bytes_in_flight(uint32_t queue) const;
  uint64_t guest_errors() const override { return errors_.count(); }
  // BlockSettings, then BlockCounters.
  void visit_counters(const virtio::CounterVisitor& visit) const override;

  // VirtioDevice
  uint32_t device_id() const override { return kDeviceId; }
  uint64_t device_features() const override;
  uint32_t num_queues() const override { return static_cast<uint32_t>(queues_.size()); }
  uint16_t queue_max_size(uint32_t) const override { return kQueueSize; }
  uint32_t config_size() const override;
  void read_config(uint32_t offset, std::span<uint8_t> data) override;
  bool activate(const virtio::DeviceActivation& activation) override;
  void queue_notify(uint32_t queue) override;
  void enable_queue(const virtio::ActiveQueue& queue) override;
  void reset() override;

 private:
  struct Queue;  // one request queue's state (virtio_blk.cc)
  // Under the device lock.
  void process(Queue& q);
  virtio::ChainStep take(Queue& q, const virtio::DescriptorChain& chain);
  // The engines' side.
  void on_io_thread_start(const std::function<void()>& confine);
  IoOutcome execute(const IoJob& job);
  void make_engines();
  std::unique_ptr<IoEngine> make_uring_engine(Queue& q, std::string& why);
  std::unique_ptr<IoEngine> make_threads_engine(Queue& q);
  std::string engine_thread_name(const Queue& q) const;
  bool admit(Queue& q, uint64_t cost);
  bool current(const IoJob& job) const;  // its activation was not reset
  void count(const BlockRequest& request, int error);
  void complete_request(const IoJob& job, uint32_t written, bool more);

  const GuestMemory& memory_;
  EventLoop& loop_;
  const DiskImage disk_;
  const BlockDeviceOptions options_;
  DiskLimits limits_;
  BlockSettings settings_;
  BlockCounters counters_;
  GuestErrorLog errors_{"virtio-blk"};
  LogLimit io_error_log_;  // the image's errors (host side, not the guest's)
  // Set by reset() and the destructor: a completion waiting for the device
  // lock gives up. Cleared at activation, under the lock.
  std::atomic<bool> abandon_{true};
  // Completions between their check of abandon_ and leaving the lock: a
  // reset waits for none to be left (they give up within a millisecond).
  std::atomic<unsigned> completing_{0};
  // The activation: moves at every reset (under the device lock); engines
  // read it to tell a stale job (current()).
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> confine_failed_{false};  // the worker could not confine itself: it does no I/O

  // Under the device lock:
  DeviceLock* lock_ = nullptr;
  virtio::VirtioInterrupt* interrupt_ = nullptr;

  // Each with its drain, bound, engine and bounce buffer; the destructor
  // stops every engine before anything else goes.
  std::vector<std::unique_ptr<Queue>> queues_;
};

}  // namespace kvmmio::block
