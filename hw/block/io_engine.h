// SPDX-License-Identifier: BSD-2-Clause
// IoEngine: what VirtioBlock hands a queue's checked requests to (one
// engine per queue, each with its own thread). Two engines: IoWorker (a
// thread with blocking pread/pwritev/fdatasync/fallocate) and UringWorker
// (an io_uring ring, its completions reaped on its own thread). Both keep
// the same contract:
//  - submit() is called under the device lock and never waits for I/O;
//  - a job is `current` while the device's activation it came from lasts
//    (IoJob::generation; a reset moves it). A job that is no longer
//    current is not started, and its status byte is not written;
//  - the engine writes the status byte after the request's I/O (a FLUSH's
//    after the data is durable), then calls `complete` without any lock of
//    its own (complete takes the device lock, DeviceLock::lock_unless);
//    every job the engine took gets exactly one `complete`, current or
//    not: that is how the device learns its budget (IoJob::cost) is free;
//  - cancel() (a reset, holding the device lock) drops the jobs not yet
//    taken, returns what they held, and wakes the thread; it never waits
//    for I/O. Jobs already taken finish on the engine's thread, off the
//    device lock, their completions discarded;
//  - the engine starts no job of a newer activation while one of an older
//    one is still in the kernel, so a stale write never lands after a
//    newer one on the same sectors;
//  - the destructor waits for what the kernel holds (it reads or writes
//    guest memory, which must stay mapped): at most the device's in-flight
//    byte bound per engine (VirtioBlock::kMaxInFlightBytes).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "block_io.h"
#include "kvmmio/block/block_request.h"
#include "kvmmio/virtio/descriptor_chain.h"

namespace kvmmio::block {

struct IoJob {
  uint64_t generation = 0;  // the device's activation it belongs to
  uint16_t queue = 0;       // the request queue it came from, where it completes
  virtio::DescriptorChain chain;
  BlockRequest request;
  uint64_t cost = 0;  // bytes held against the queue's in-flight byte bound until `complete`
};

// What cancel() dropped: the jobs, and the bytes they held.
struct Dropped {
  unsigned jobs = 0;
  uint64_t bytes = 0;
};

// Empties `jobs` (a reset's cancel()): what they held.
inline Dropped drop_all(std::deque<IoJob>& jobs) {
  Dropped dropped;
  for (const IoJob& job : jobs) {
    ++dropped.jobs;
    dropped.bytes += job.cost;
  }
  jobs.clear();
  return dropped;
}

class IoEngine {
 public:
  // Runs a request with blocking calls and writes its status if the job is
  // still current (IoWorker's every request; UringWorker's GET_ID and
  // cache=none IN/OUT).
  using Execute = std::function<IoOutcome(const IoJob& job)>;
  // False once the job's activation was reset: drop it, write nothing.
  using Current = std::function<bool(const IoJob& job)>;
  // `more`: another completion follows soon (the interrupt can wait).
  using Complete = std::function<void(const IoJob& job, const IoOutcome& outcome, bool more)>;

  virtual ~IoEngine() = default;
  virtual void submit(IoJob job) = 0;
  virtual Dropped cancel() = 0;
  // "io_uring" or "threads": what --stats reports.
  virtual const char* name() const = 0;
};

}  // namespace kvmmio::block
