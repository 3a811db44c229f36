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
// first request. cancel() drops the jobs not taken and returns at once;
// requests in the kernel are not cancelled (a disk request ends by
// itself): when they complete their status bytes are not written and the
// device discards their completions. A request of a newer activation
// waits until the kernel gave back every request of an older one.
//
// io_uring_enter failing: EINTR, EAGAIN and EBUSY (the kernel short of
// request memory, or the completion queue full) are retried after the
// completions are reaped, ENOMEM after a back-off; after kSubmitRetries
// failures in a row the requests whose SQEs the kernel has not taken are
// answered IOERR (their SQEs made into a harmless read of the eventfd,
// so they never touch guest memory). Any other error means the ring is
// broken: the same for the requests not taken, and from then on every
// request runs with blocking calls (`execute`), as with a refused ring.
// Nothing on this path ends the process.
#pragma once

#include <liburing.h>

#include <chrono>
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
#include "kvmmio/base/log_limit.h"
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
    Current current;
    Execute execute;
    Count count;
    Complete complete;
    // Tests only: runs on the thread before a request goes to the ring.
    std::function<void(const BlockRequest&)> before_io;
    // Tests only: runs on the thread before each io_uring_submit_and_wait;
    // a negative errno it returns is taken as the call's result instead of
    // making the call (0: make it).
    std::function<int()> submit_fault;
  };

  // The ring for `disk`, or nullptr with `why` set.
  static std::unique_ptr<UringWorker> create(std::string name, const GuestMemory& memory, const DiskImage& disk,
                                             Hooks hooks, std::string& why);
  ~UringWorker() override;
  UringWorker(const UringWorker&) = delete;
  UringWorker& operator=(const UringWorker&) = delete;

  void submit(IoJob job) override;
  Dropped cancel() override;
  const char* name() const override { return "io_uring"; }

  // The ring's entries: the device's in-flight bound and the wake-up read.
  static constexpr unsigned kEntries = 128;
  // io_uring_enter failures in a row before the requests the kernel has
  // not taken are answered IOERR; the back-off between them doubles from
  // kFirstBackoff up to kMaxBackoff (about a quarter of a second in all:
  // a lasting shortage fails requests, it never stalls the queue).
  static constexpr unsigned kSubmitRetries = 10;
  static constexpr auto kFirstBackoff = std::chrono::microseconds(500);
  static constexpr auto kMaxBackoff = std::chrono::milliseconds(100);

 private:
  struct Op;
  UringWorker(std::string name, const GuestMemory& memory, const DiskImage& disk, Hooks hooks);
  void run();
  void wake();
  void arm_wake();
  bool start(Op& op);  // false: no SQE free (the ring is full)
  void finish(std::unique_ptr<Op> op, int error);
  void handle(Op* op, int res);
  bool stale(const Op& op) const;  // its activation was reset
  void submit_and_reap();
  void answer_unsubmitted(int error);  // IOERR for what the kernel has not taken
  void wait_broken();                  // no ring: completions of what it still holds, or a wake-up

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
  std::deque<IoJob> jobs_;   // submitted, not yet taken by the thread
  bool stop_ = false;

  // The worker thread's own:
  // Taken, not yet in the kernel. A list, not a deque: a deque's map
  // moves use std::copy, whose instantiations with Op would be exported
  // from libkvmmio.so at -O0 (a member template of a std class keeps std's
  // default visibility even for a hidden argument type;
  // tests/check-exports.sh).
  std::list<std::unique_ptr<Op>> pending_;
  unsigned in_kernel_ = 0;                   // requests the ring holds (not the wake-up read)
  uint64_t kernel_generation_ = 0;           // the activation of the requests in the kernel
  unsigned failures_ = 0;                    // io_uring_enter failures in a row
  bool broken_ = false;                      // io_uring_enter failed for good: blocking calls only
  char orphan_ = 0;
  LogLimit enter_failures_;                          // user data of an SQE whose request was answered
  bool started_ = false;
  bool wake_armed_ = false;  // the eventfd read is in the ring
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace kvmmio::block
