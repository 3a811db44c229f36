// SPDX-License-Identifier: BSD-2-Clause
// VirtioConsole: the transmitq to the output fd, host input into the
// receiveq, and the checks of what the guest hands over (see the header).
#include "kvmmio/console/virtio_console.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <system_error>

namespace kvmmio::console {
namespace {


// One write() at most: after poll() reports room, a pipe takes PIPE_BUF
// bytes without blocking, so TX never waits inside write().
constexpr size_t kWriteChunk = PIPE_BUF;

}  // namespace

VirtioConsole::VirtioConsole(const GuestMemory& memory, EventLoop& loop, int output_fd)
    : memory_(memory),
      loop_(loop),
      output_fd_(output_fd),
      rx_drain_([this] { ++counters_.budget_yields; }),
      tx_drain_([this] {
        ++counters_.budget_yields;
        tx_resume_->schedule();
      }) {}

VirtioConsole::~VirtioConsole() = default;

void VirtioConsole::read_config(uint32_t offset, std::span<uint8_t> data) {
  // cols and rows are valid only with F_SIZE, max_nr_ports only with
  // F_MULTIPORT, neither offered; the one port is what max_nr_ports says.
  uint8_t config[kConfigSize] = {};
  const uint32_t max_nr_ports = 1;
  std::memcpy(config + 4, &max_nr_ports, sizeof max_nr_ports);
  std::memcpy(data.data(), config + offset, data.size());
}

bool VirtioConsole::activate(const virtio::DeviceActivation& activation) {
  rx_ = tx_ = nullptr;
  for (const auto& q : activation.queues) {
    if (q.index == kReceiveQueue) rx_ = q.ring;
    if (q.index == kTransmitQueue) tx_ = q.ring;
  }
  interrupt_ = activation.interrupt;
  rx_drain_.bind(rx_, interrupt_);
  tx_drain_.bind(tx_, interrupt_);
  failed_ = false;
  tx_pending_ = false;
  try {
    tx_resume_ = std::make_unique<DeferredWork>(loop_, *activation.lock, [this] { transmit(); });
  } catch (const std::exception& e) {
    KVMMIO_LOG_ERROR("virtio-console: cannot start: %s", e.what());
    return false;
  }
  {
    std::lock_guard guard(input_mutex_);
    lock_ = activation.lock;
    // Input refused before any driver came: the RX notify that follows
    // activation asks for it (queue_notify()).
    if (refused_before_activation_) input_waiting_ = true;
    refused_before_activation_ = false;
  }
  ++counters_.activations;
  return true;
}

void VirtioConsole::reset() {
  output_watch_.reset();  // its callback, if waiting for our lock, gives up
  tx_resume_.reset();
  rx_drain_.unbind();
  tx_drain_.unbind();
  rx_ = tx_ = nullptr;
  interrupt_ = nullptr;
  tx_pending_ = false;
  failed_ = false;
  // Input that waited keeps waiting: the next driver's RX notify asks for it.
}

void VirtioConsole::queue_notify(uint32_t queue) {
  if (queue == kTransmitQueue) {
    transmit();
  } else if (queue == kReceiveQueue && input_waiting_) {
    // The guest posted receive buffers: the waiting input may come now.
    input_waiting_ = false;
    space_available();
  }
}

void VirtioConsole::fail(const char* why) {
  errors_.report("%s", why);
  failed_ = true;
  if (interrupt_) interrupt_->needs_reset(why);
}

void VirtioConsole::set_rx_space_callback(std::function<void()> callback) {
  std::lock_guard guard(input_mutex_);
  space_callback_ = std::move(callback);
}

void VirtioConsole::space_available() {
  std::function<void()> callback;
  {
    std::lock_guard guard(input_mutex_);
    callback = space_callback_;
  }
  if (callback) callback();
}

size_t VirtioConsole::receive(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return 0;
  DeviceLock* lock = nullptr;
  {
    std::lock_guard guard(input_mutex_);
    lock = lock_;
    if (!lock) {
      // No driver yet: the caller keeps the input until the first
      // activation asks for it.
      if (!refused_before_activation_) ++counters_.rx_waits;
      refused_before_activation_ = true;
      return 0;
    }
  }
  auto guard = lock->lock();
  size_t taken = 0;
  virtio::DrainResult r;
  if (!failed_)
    r = rx_drain_.run({.chains = kRxChainsPerDispatch}, [&](const virtio::DescriptorChain& chain, uint64_t) {
      if (chain.readable_bytes) {
        fail("receiveq chain has device-readable buffers (5.3.6: receive buffers are device-writable)");
        return virtio::ChainStep::failed();
      }
      const size_t n = virtio::write_to_chain(memory_, chain, 0, bytes.subspan(taken));
      taken += n;
      const auto written = static_cast<uint32_t>(n);
      return taken == bytes.size() ? virtio::ChainStep::last(written) : virtio::ChainStep::used(written);
    });
  counters_.rx_bytes += taken;
  if (r.stop == virtio::DrainStop::kBudget) {
    // More buffers may be there: the caller comes back on a later turn.
    guard.unlock();
    space_available();
    return taken;
  }
  if (taken < bytes.size()) {
    // No room now: the caller keeps the rest until the guest posts buffers.
    if (!input_waiting_) ++counters_.rx_waits;
    input_waiting_ = true;
  }
  return taken;
}

// Sends the chains the guest made available until the ring is empty, the
// output fd is full, or the budget is used up (QueueDrain: notifies
// suppressed meanwhile; at the budget tx_resume_ continues).
void VirtioConsole::transmit() {
  if (!tx_ || failed_ || output_watch_) return;  // a full output fd: its watch resumes TX
  tx_drain_.run({.chains = kTxChainsPerDispatch, .bytes = kTxBytesPerDispatch},
                [this](const virtio::DescriptorChain& chain, uint64_t budget) { return send_chain(chain, budget); });
}

// Writes the rest of `chain`, at most `budget` bytes: done, unfinished at
// the budget, or paused until the output fd has room (the watch resumes
// TX; the same chain comes first then).
virtio::ChainStep VirtioConsole::send_chain(const virtio::DescriptorChain& chain, uint64_t budget) {
  if (!tx_pending_) {
    if (chain.writable_bytes) {
      fail("transmitq chain has device-writable buffers (5.3.6: transmit buffers are device-readable)");
      return virtio::ChainStep::failed();
    }
    tx_pending_ = true;
    tx_offset_ = 0;
  }
  uint8_t buf[kWriteChunk];
  uint64_t sent = 0;
  while (tx_offset_ < chain.readable_bytes) {
    if (sent == budget) return virtio::ChainStep::unfinished(sent);
    const size_t want = std::min<uint64_t>(sizeof buf, budget - sent);
    const size_t n = virtio::read_from_chain(memory_, chain, tx_offset_, {buf, want});
    if (n == 0) break;  // nothing more readable (the chain was checked when popped)
    const size_t written = write_output({buf, n});
    if (written == 0) {
      // Notifies stay suppressed: the watch resumes TX when the fd has room.
      if (wait_for_output_room()) return virtio::ChainStep::paused(sent);
      continue;  // cannot wait: the rest is dropped
    }
    tx_offset_ += written;
    sent += written;
  }
  tx_pending_ = false;
  // 2.7.8: the device wrote nothing into a transmit buffer.
  return virtio::ChainStep::used(0, sent);
}

// Writes what the fd takes without waiting: 0 when it is full.
size_t VirtioConsole::write_output(std::span<const uint8_t> bytes) {
  for (;;) {
    if (output_broken_) {
      counters_.output_dropped += bytes.size();
      return bytes.size();
    }
    pollfd p{output_fd_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, 0);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return 0;
    if (ready > 0 && !(p.revents & (POLLERR | POLLHUP | POLLNVAL))) {
      const ssize_t r = ::write(output_fd_, bytes.data(), bytes.size());
      if (r > 0) {
        counters_.tx_bytes += static_cast<uint64_t>(r);
        return static_cast<size_t>(r);
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno == EAGAIN) return 0;
    }
    // The reader is gone (EPIPE, hang-up) or the fd is bad: the guest's
    // output is dropped from now on, so the guest never stalls on it.
    const char* why = ready < 0 ? std::strerror(errno)
                      : (p.revents & (POLLERR | POLLHUP | POLLNVAL)) ? "hung up or invalid"
                                                                     : std::strerror(errno);
    KVMMIO_LOG_WARN("virtio-console output fd %d: %s; guest output is dropped from now on",
                    output_fd_, why);
    output_broken_ = true;
  }
}

bool VirtioConsole::wait_for_output_room() {
  ++counters_.tx_stalls;
  try {
    output_watch_ = lock_->watch_writable(loop_, output_fd_, [this] { on_output_room(); });
    return true;
  } catch (const std::system_error& e) {
    // epoll refuses only fds that never report full, so this is not
    // expected; the guest must not wait forever for it either.
    KVMMIO_LOG_WARN("virtio-console output fd %d cannot be watched (%s); guest output is dropped",
                    output_fd_, e.what());
    output_broken_ = true;
    return false;
  }
}

// The output fd has room (event-loop thread, device lock held).
void VirtioConsole::on_output_room() {
  output_watch_.reset();  // from its own callback: allowed, does not wait
  transmit();
}

}  // namespace kvmmio::console
