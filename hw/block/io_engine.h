// SPDX-License-Identifier: BSD-2-Clause
// IoEngine: what VirtioBlock hands a queue's checked requests to (one
// engine per queue, each with its own thread). Two engines: IoWorker (a
// thread with blocking pread/pwritev/fdatasync/fallocate) and UringWorker
// (an io_uring ring, its completions reaped on its own thread). Both keep
// the same contract:
//  - submit() is called under the device lock and never waits for I/O;
//  - the engine writes the status byte after the request's I/O (a FLUSH's
//    after the data is durable), then calls `complete` without any lock of
//    its own (complete takes the device lock, DeviceLock::lock_unless);
//  - cancel_and_wait() (a reset, holding the device lock) drops what has
//    not started and waits for what the kernel still holds; after it
//    returns the engine touches neither guest memory nor the device until
//    the next submit().
#pragma once

#include <cstdint>
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
};

class IoEngine {
 public:
  // Runs a request with blocking calls and writes its status (IoWorker's
  // every request; UringWorker's GET_ID and cache=none IN/OUT).
  using Execute = std::function<IoOutcome(const IoJob& job)>;
  // `more`: another completion follows soon (the interrupt can wait).
  using Complete = std::function<void(const IoJob& job, const IoOutcome& outcome, bool more)>;

  virtual ~IoEngine() = default;
  virtual void submit(IoJob job) = 0;
  virtual void cancel_and_wait() = 0;
  // "io_uring" or "threads": what --stats reports.
  virtual const char* name() const = 0;
};

}  // namespace kvmmio::block
