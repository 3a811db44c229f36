// SPDX-License-Identifier: BSD-2-Clause
// UringWorker: the io_uring engine of one queue (engine=io_uring, the
// default). Requests are submitted to a restricted ring and reaped on the
// worker's own thread, several in the kernel at once (at most the device's
// bound, VirtioBlock::kMaxInFlight).
//
// The ring (create()) is made with IORING_SETUP_R_DISABLED, gets two fixed
// files (index 0: the image; index 1: an eventfd that wakes the thread),
// then restrictions: only READV, WRITEV, FSYNC and FALLOCATE, and every
// SQE must carry IOSQE_FIXED_FILE, so the ring reaches nothing but those
// two files whoever drives it; then it is enabled. A ring that cannot be
// made (io_uring absent or disabled, refused by a seccomp filter, an old
// kernel without restrictions) is reported through `why`, for the caller
// to fall back to IoWorker.
//
// Order: requests start in submission order; a FLUSH waits until every
// earlier request of the queue completed, then runs fsync(DATASYNC), and
// its status byte is written when that completed. Short reads and writes
// are resubmitted for the rest; 0 bytes is EIO (the image shrank).
// GET_ID (no I/O) and, with cache=none, IN/OUT (guest buffers need not be
// aligned for O_DIRECT: the threads engine's bounce-buffer path) run with
// blocking calls on this thread, through `execute`, after the requests in
// the kernel completed.
//
// Threads: submit() (under the device lock) queues the job and writes the
// eventfd; the worker thread takes jobs, fills SQEs, io_uring_enter()s
// and handles completions: the status byte, then `complete`. It confines
// itself (`on_start`, kvmmio's seccomp class "block-uring") before its
// first request. cancel_and_wait() drops the jobs not started and waits
// until the kernel gave back every request (they are not cancelled: a
// disk request ends by itself), without writing their status bytes.
#pragma once

#include <liburing.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io_engine.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/block/disk_image.h"
#include "kvmmio/guest_memory.h"

namespace kvmmio::block {

class UringWorker final : public IoEngine {
 public:
  // Counts a request run through the ring (error: its errno, or 0).
  using Count = std::function<void(const BlockRequest& request, int error)>;
  struct Hooks {
    std::function<void()> on_start;  // on the worker thread, before its first request
    // True once on_start failed: every request goes to `execute` (which
    // answers IOERR), none to the ring.
    std::function<bool()> refused;
    Execute execute;
    Count count;
    Complete complete;
  };

  // The ring for `disk`, or nullptr with `why` set.
  static std::unique_ptr<UringWorker> create(std::string name, const GuestMemory& memory, const DiskImage& disk,
                                             Hooks hooks, std::string& why);
  ~UringWorker() override;
  UringWorker(const UringWorker&) = delete;
  UringWorker& operator=(const UringWorker&) = delete;

  void submit(IoJob job) override;
  void cancel_and_wait() override;
  const char* name() const override { return "io_uring"; }

  // The ring's entries: the device's in-flight bound and the wake-up read.
  static constexpr unsigned kEntries = 128;

 private:
  struct Op;
  UringWorker(std::string name, const GuestMemory& memory, const DiskImage& disk, Hooks hooks);
  void run();
  void wake();
  void arm_wake();
  bool start(Op& op);  // false: no SQE free (the ring is full)
  void finish(std::unique_ptr<Op> op, int error);
  void handle(Op* op, int res);
  void retire();  // one job done or dropped

  std::string name_;
  const GuestMemory& memory_;
  const DiskImage& disk_;
  Hooks hooks_;
  io_uring ring_{};
  bool ring_ready_ = false;
  UniqueFd wake_fd_;
  uint64_t wake_buf_ = 0;
  iovec wake_iov_{&wake_buf_, sizeof wake_buf_};

  std::mutex mutex_;
  std::condition_variable idle_;
  std::deque<IoJob> jobs_;   // submitted, not yet taken by the thread
  uint64_t epoch_ = 0;       // moves at every cancel_and_wait()
  unsigned outstanding_ = 0;  // taken and not yet completed or dropped
  bool stop_ = false;

  // The worker thread's own:
  // Taken, not yet in the kernel. A list, not a deque: a deque's map
  // moves use std::copy, whose instantiations with Op would be exported
  // from libkvmmio.so at -O0 (a member template of a std class keeps std's
  // default visibility even for a hidden argument type;
  // tests/check-exports.sh).
  std::list<std::unique_ptr<Op>> pending_;
  unsigned in_kernel_ = 0;                   // requests the ring holds (not the wake-up read)
  bool started_ = false;
  bool wake_armed_ = false;  // the eventfd read is in the ring
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace kvmmio::block
