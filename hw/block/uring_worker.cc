// SPDX-License-Identifier: BSD-2-Clause
// UringWorker: one queue's io_uring engine (see the header).
#include "uring_worker.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <span>
#include <thread>

#include "kvmmio/base/thread_name.h"

namespace kvmmio::block {

// One request the thread took: its job, and for IN/OUT the guest buffers
// still to transfer.
struct UringWorker::Op {
  IoJob job;
  std::vector<iovec> iov;  // IN/OUT: the guest's spans (GuestMemory::span, through chain_host_spans)
  size_t first = 0;        // the first iovec not yet done
  uint64_t offset = 0;     // where in the image the rest goes
  bool seen = false;       // before_io ran for it
};

namespace {

bool is_rw(uint32_t type) { return type == spec::kTIn || type == spec::kTOut; }

std::string failed(const char* what, int error) { return std::string(what) + ": " + std::strerror(error); }

}  // namespace

std::unique_ptr<UringWorker> UringWorker::create(std::string name, const GuestMemory& memory, const DiskImage& disk,
                                                 Hooks hooks, std::string& why) {
  std::unique_ptr<UringWorker> w(new UringWorker(std::move(name), memory, disk, std::move(hooks)));
  io_uring_params params{};
  params.flags = IORING_SETUP_R_DISABLED;  // restricted before anything can be submitted
  if (int r = io_uring_queue_init_params(kEntries, &w->ring_, &params); r < 0) {
    why = failed("io_uring_setup", -r);
    return nullptr;
  }
  w->ring_ready_ = true;
  w->wake_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC));
  if (w->wake_fd_.get() < 0) {
    why = failed("eventfd", errno);
    return nullptr;
  }
  // The ring gets an open file description of its own for the image, not
  // DiskImage's: the kernel drops a ring's registered files some time
  // after the ring is closed (a worker thread puts them), and the image's
  // flock, which belongs to the description, would outlive the device and
  // refuse the next kvmmio (or the next device on the image) for a while.
  const int flags = ::fcntl(disk.fd(), F_GETFL);
  UniqueFd image(flags < 0 ? -1
                           : ::open(("/proc/self/fd/" + std::to_string(disk.fd())).c_str(),
                                    (flags & (O_ACCMODE | O_DIRECT)) | O_CLOEXEC));
  if (image.get() < 0) {
    why = failed("reopening the image through /proc/self/fd", errno);
    return nullptr;
  }
  const int files[] = {image.get(), w->wake_fd_.get()};
  if (int r = io_uring_register_files(&w->ring_, files, 2); r < 0) {
    why = failed("io_uring_register(IORING_REGISTER_FILES)", -r);
    return nullptr;
  }
  io_uring_restriction res[6] = {};
  const uint8_t ops[] = {IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_FALLOCATE};
  for (size_t i = 0; i < std::size(ops); ++i) {
    res[i].opcode = IORING_RESTRICTION_SQE_OP;
    res[i].sqe_op = ops[i];
  }
  res[4].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
  res[4].sqe_flags = IOSQE_FIXED_FILE;
  res[5].opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED;
  res[5].sqe_flags = IOSQE_FIXED_FILE;  // the two registered files, nothing else
  // Through the system call: Debian 12's liburing.so (2.3) does not export
  // io_uring_register_restrictions() nor io_uring_enable_rings().
  if (::syscall(__NR_io_uring_register, w->ring_.ring_fd, IORING_REGISTER_RESTRICTIONS, res, 6) < 0) {
    why = failed("io_uring_register(IORING_REGISTER_RESTRICTIONS)", errno);
    return nullptr;
  }
  if (::syscall(__NR_io_uring_register, w->ring_.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0) < 0) {
    why = failed("io_uring_register(IORING_REGISTER_ENABLE_RINGS)", errno);
    return nullptr;
  }
  w->thread_ = std::thread([p = w.get()] { p->run(); });
  return w;
}

UringWorker::UringWorker(std::string name, const GuestMemory& memory, const DiskImage& disk, Hooks hooks)
    : name_(std::move(name)), memory_(memory), disk_(disk), hooks_(std::move(hooks)) {}

UringWorker::~UringWorker() {
  if (thread_.joinable()) {
    {
      std::lock_guard guard(mutex_);
      stop_ = true;
      jobs_.clear();
    }
    wake();
    thread_.join();  // after the kernel gave back every request
  }
  if (ring_ready_) io_uring_queue_exit(&ring_);
}

void UringWorker::wake() {
  const uint64_t one = 1;
  ssize_t ignored = ::write(wake_fd_.get(), &one, sizeof one);  // a full counter wakes it too
  (void)ignored;
}

void UringWorker::submit(IoJob job) {
  {
    std::lock_guard guard(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake();
}

Dropped UringWorker::cancel() {
  Dropped dropped;
  {
    std::lock_guard guard(mutex_);
    dropped = drop_all(jobs_);
  }
  wake();  // the thread drops the stale jobs it took but did not start
  return dropped;
}

void UringWorker::arm_wake() {
  if (wake_armed_) return;
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) return;  // the ring is full: completions wake the thread, and the next turn arms it
  io_uring_prep_readv(sqe, 1, &wake_iov_, 1, 0);
  io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
  io_uring_sqe_set_data(sqe, &wake_buf_);
  wake_armed_ = true;
}

bool UringWorker::start(Op& op) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) return false;
  const BlockRequest& r = op.job.request;
  const unsigned count = static_cast<unsigned>(std::min<size_t>(op.iov.size() - op.first, IOV_MAX));
  switch (r.type) {
    case spec::kTIn: io_uring_prep_readv(sqe, 0, op.iov.data() + op.first, count, op.offset); break;
    case spec::kTOut: io_uring_prep_writev(sqe, 0, op.iov.data() + op.first, count, op.offset); break;
    case spec::kTFlush: io_uring_prep_fsync(sqe, 0, IORING_FSYNC_DATASYNC); break;
    default:  // DISCARD, WRITE_ZEROES (the rest never reaches the ring)
      io_uring_prep_fallocate(sqe, 0, fallocate_mode(disk_, r), r.sector * spec::kSectorSize, r.data_bytes);
      break;
  }
  io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
  io_uring_sqe_set_data(sqe, &op);
  ++in_kernel_;
  kernel_generation_ = op.job.generation;
  return true;
}

bool UringWorker::stale(const Op& op) const { return !hooks_.current(op.job); }

void UringWorker::finish(std::unique_ptr<Op> op, int error) {
  const BlockRequest& r = op->job.request;
  IoOutcome out;
  out.error = error;
  out.status = error ? spec::kSIoErr : spec::kSOk;
  if (!stale(*op)) {  // else a reset dropped it: no status byte, and the device discards it
    write_status(memory_, op->job.chain, r.status_offset, out.status);
    out.written = (r.type == spec::kTIn && !error ? static_cast<uint32_t>(r.data_bytes) : 0) + 1;
    hooks_.count(r, error);
  }
  hooks_.complete(op->job, out, !pending_.empty() || in_kernel_ > 0);
}

// A completion of `op` with `res` (bytes, or -errno).
void UringWorker::handle(Op* raw, int res) {
  std::unique_ptr<Op> op(raw);
  if (stale(*op)) {
    finish(std::move(op), ECANCELED);  // what is left of it is not done
    return;
  }
  if (res == -EINTR || res == -EAGAIN) {
    pending_.push_front(std::move(op));  // again, as it was
    return;
  }
  if (!is_rw(op->job.request.type) || res < 0) {
    finish(std::move(op), res < 0 ? -res : 0);
    return;
  }
  if (res == 0) {
    finish(std::move(op), EIO);  // the image shrank under us: never loop
    return;
  }
  // A short transfer goes on from where it stopped.
  op->offset += static_cast<uint64_t>(res);
  auto left = static_cast<size_t>(res);
  while (op->first < op->iov.size() && left >= op->iov[op->first].iov_len) left -= op->iov[op->first++].iov_len;
  if (left) {
    op->iov[op->first].iov_base = static_cast<uint8_t*>(op->iov[op->first].iov_base) + left;
    op->iov[op->first].iov_len -= left;
  }
  if (op->first == op->iov.size()) {
    finish(std::move(op), 0);
    return;
  }
  pending_.push_front(std::move(op));
}

// The SQEs published but not yet taken by the kernel (between its head and
// our tail) are ours to rewrite: without SQPOLL the kernel reads them only
// inside io_uring_enter. Each request's becomes a read of the eventfd with
// no buffer (it fails at once, touching nothing), and the request is
// answered now.
void UringWorker::answer_unsubmitted(int error) {
  const unsigned head = io_uring_smp_load_acquire(ring_.sq.khead);
  for (unsigned i = head; i != ring_.sq.sqe_tail; ++i) {
    const unsigned slot = i & ring_.sq.ring_mask;
    io_uring_sqe* sqe = &ring_.sq.sqes[ring_.sq.array ? ring_.sq.array[slot] : slot];
    void* data = reinterpret_cast<void*>(static_cast<uintptr_t>(sqe->user_data));
    if (data == &wake_buf_ || data == &orphan_) continue;
    io_uring_prep_readv(sqe, 1, nullptr, 0, 0);
    io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
    io_uring_sqe_set_data(sqe, &orphan_);
    --in_kernel_;
    finish(std::unique_ptr<Op>(static_cast<Op*>(data)), error);
  }
}

void UringWorker::submit_and_reap() {
  int r = hooks_.submit_fault ? hooks_.submit_fault() : 0;
  if (r == 0) r = io_uring_submit_and_wait(&ring_, 1);
  if (r >= 0) {
    failures_ = 0;
  } else if (r == -EINTR || r == -EAGAIN || r == -EBUSY || r == -ENOMEM) {
    // Short of memory, or the completion queue full: the completions below
    // make room; back off when there are none, so a lasting shortage does
    // not spin a CPU.
    if (++failures_ >= kSubmitRetries) {
      failures_ = 0;
      if (const uint64_t n = enter_failures_.next())
        KVMMIO_LOG_WARN("virtio-blk %s: io_uring_enter failed %u times in a row (%s); the requests it did not "
                        "take are answered IOERR (#%llu)",
                        disk_.path().c_str(), kSubmitRetries, std::strerror(-r), static_cast<unsigned long long>(n));
      answer_unsubmitted(-r);
    } else if (!io_uring_cq_ready(&ring_)) {
      std::this_thread::sleep_for(std::min<std::chrono::microseconds>(kFirstBackoff * (1u << (failures_ - 1)),
                                                                      kMaxBackoff));
    }
  } else {
    // Not expected of a working ring. The kernel may still hold requests
    // on guest memory: their completions are still reaped (the completion
    // queue needs no system call); the rest run with blocking calls.
    KVMMIO_LOG_ERROR("virtio-blk %s: io_uring_enter: %s; the ring's waiting requests fail, the rest run with "
                     "blocking calls",
                     disk_.path().c_str(), std::strerror(-r));
    broken_ = true;
    answer_unsubmitted(-r);
  }
  io_uring_cqe* cqe;
  while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
    void* data = io_uring_cqe_get_data(cqe);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    if (data == &wake_buf_) {
      wake_armed_ = false;  // armed again at the top of the next turn
      continue;
    }
    if (data == &orphan_) continue;  // its request was answered already
    --in_kernel_;
    handle(static_cast<Op*>(data), res);
  }
}

// A broken ring: what it still holds completes by itself (reaped with a
// short sleep between looks); otherwise the thread sleeps on the eventfd.
void UringWorker::wait_broken() {
  constexpr auto kPoll = std::chrono::milliseconds(1);
  if (in_kernel_ == 0) {
    uint64_t count;
    ssize_t ignored = ::read(wake_fd_.get(), &count, sizeof count);
    (void)ignored;
    return;
  }
  std::this_thread::sleep_for(kPoll);
  io_uring_cqe* cqe;
  while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
    void* data = io_uring_cqe_get_data(cqe);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    if (data == &wake_buf_ || data == &orphan_) continue;
    --in_kernel_;
    handle(static_cast<Op*>(data), res);
  }
}

void UringWorker::run() {
  name_this_thread(name_);
  for (;;) {
    if (!broken_) arm_wake();  // before anything else can take the ring's last free entry
    bool stopping;
    {
      std::lock_guard guard(mutex_);
      stopping = stop_;
      for (; !stop_ && !jobs_.empty(); jobs_.pop_front()) {
        auto op = std::make_unique<Op>();
        op->job = std::move(jobs_.front());
        pending_.push_back(std::move(op));
      }
    }
    if (stopping) {
      pending_.clear();  // never started; the device is going and waits for none
      if (in_kernel_ == 0) return;
    }

    while (!pending_.empty()) {
      Op& op = *pending_.front();
      const uint32_t type = op.job.request.type;
      if (!started_) {
        started_ = true;
        if (hooks_.on_start) hooks_.on_start();
      }
      if (stale(op)) {  // a reset came before it started: given back, never started
        std::unique_ptr<Op> taken = std::move(pending_.front());
        pending_.pop_front();
        finish(std::move(taken), ECANCELED);
        continue;
      }
      const bool blocking = broken_ || hooks_.refused() || type == spec::kTGetId || (is_rw(type) && disk_.direct());
      // A FLUSH covers what completed: it waits for every earlier request,
      // and so does a request run with blocking calls on this thread. A
      // request of a newer activation waits for the older one's, so a
      // stale write cannot land after it.
      if ((blocking || type == spec::kTFlush || op.job.generation != kernel_generation_) && in_kernel_ > 0) break;
      if (blocking) {
        std::unique_ptr<Op> taken = std::move(pending_.front());
        pending_.pop_front();
        const IoOutcome out = hooks_.execute(taken->job);
        hooks_.complete(taken->job, out, !pending_.empty());
        continue;
      }
      if (hooks_.before_io && !op.seen) hooks_.before_io(op.job.request);
      op.seen = true;
      if (is_rw(type) && op.iov.empty()) {
        const bool in = type == spec::kTIn;
        const uint64_t chain_offset = in ? 0 : sizeof(spec::RequestHeader);
        const uint64_t len = op.job.request.data_bytes;
        std::vector<std::span<uint8_t>> spans;
        if (virtio::chain_host_spans(memory_, op.job.chain, in, chain_offset, len, spans) != len) {
          std::unique_ptr<Op> taken = std::move(pending_.front());
          pending_.pop_front();
          finish(std::move(taken), EFAULT);
          continue;
        }
        for (auto s : spans) op.iov.push_back({s.data(), s.size()});
        op.offset = op.job.request.sector * spec::kSectorSize;
      }
      if (!start(op)) break;  // the ring is full: after some completions
      pending_.front().release();  // the kernel holds it (its user data) until its completion
      pending_.pop_front();
    }
    if (broken_)
      wait_broken();
    else
      submit_and_reap();
  }
}

}  // namespace kvmmio::block
