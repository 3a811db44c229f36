// SPDX-License-Identifier: BSD-2-Clause
// VirtioBlock: the virtio-blk device (virtio 1.2 section 5.2, device ID 2)
// on a raw image (DiskImage), with one request queue or several
// (BlockDeviceOptions::queues; VIRTIO_BLK_F_MQ and num_queues offered when
// more than one, and Linux then makes min(num_queues, CPUs) queues).
//
// Features: SEG_MAX, BLK_SIZE, FLUSH, RO (ro=on), DISCARD and WRITE_ZEROES
// (where DiskImage's probe found fallocate working), and GET_ID (the
// serial; no feature bit). The capacity is in the configuration space.
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
// Bound: at most kMaxInFlight requests per queue are popped and not yet
// completed; at the bound the queue's drain pauses with notifies
// suppressed (the chains stay in the guest's ring, counted in
// inflight_waits) and the queue's next completion resumes it. The guest's
// ring (kQueueSize) is larger, so a guest cannot make a queue hold more
// than kMaxInFlight jobs, nor a device more than queues x kMaxInFlight.
//
// Reset (status 0) drops the requests not started and waits, engine by
// engine, for those running to finish their system calls; their
// completions give up waiting for the device lock (the reset holds it) and
// are dropped, so after reset() returns nothing touches the guest's
// memory, the rings or the lock for the old activation (the transport
// resets the device before it goes away).
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
  C(inflight_waits, "times a queue paused at max_in_flight until a request completed")     \
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
};

class KVMMIO_EXPORT VirtioBlock final : public virtio::VirtioDevice {
 public:
  static constexpr uint32_t kDeviceId = 2;
  static constexpr uint16_t kQueueSize = 256;
  // Per request: the header and status need a descriptor each (Linux's
  // framing), the rest is data (what QEMU and kvmtool offer too).
  static constexpr uint32_t kSegMax = kQueueSize - 2;
  static constexpr unsigned kMaxInFlight = 64;  // per queue
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
  unsigned requests_in_flight(uint32_t queue) const;
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
  // Set by reset() and the destructor: a completion waiting for the device
  // lock gives up. Cleared at activation, under the lock.
  std::atomic<bool> abandon_{false};
  std::atomic<bool> confine_failed_{false};  // the worker could not confine itself: it does no I/O

  // Under the device lock:
  DeviceLock* lock_ = nullptr;
  virtio::VirtioInterrupt* interrupt_ = nullptr;
  uint64_t generation_ = 0;  // moves at every reset

  // Each with its drain, bound, engine and bounce buffer; the destructor
  // stops every engine before anything else goes.
  std::vector<std::unique_ptr<Queue>> queues_;
};

}  // namespace kvmmio::block
