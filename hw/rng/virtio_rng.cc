// SPDX-License-Identifier: BSD-2-Clause
// VirtioRng: the requestq's drain, the rate bound's timer, and the checks
// of what the guest hands over (see the header).
#include "kvmmio/rng/virtio_rng.h"

#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <stdexcept>

#include "kvmmio/base/error.h"

namespace kvmmio::rng {
namespace {

RngSettings settings_of(const RngOptions& options) {
  if (options.bytes_per_second == 0 || options.burst_bytes == 0)
    throw std::invalid_argument("VirtioRng: bytes_per_second and burst_bytes must be at least 1");
  RngSettings s;
  s.rate_bytes_per_second = options.bytes_per_second;
  s.burst_bytes = options.burst_bytes;
  return s;
}

}  // namespace

VirtioRng::VirtioRng(const GuestMemory& memory, EventLoop& loop, RngOptions options)
    : memory_(memory),
      loop_(loop),
      settings_(settings_of(options)),
      bucket_(static_cast<double>(options.bytes_per_second), static_cast<double>(options.burst_bytes),
              std::move(options.clock)),
      drain_([this] {
        ++counters_.budget_yields;
        if (resume_) resume_->schedule();
      }) {}

VirtioRng::~VirtioRng() = default;

void VirtioRng::visit_counters(const virtio::CounterVisitor& visit) const {
  settings_.each(visit);
  counters_.each(visit);
}

bool VirtioRng::activate(const virtio::DeviceActivation& activation) {
  try {
    timer_ = UniqueFd(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!timer_) throw_errno("timerfd_create for the rate bound");
    timer_watch_ = activation.lock->watch(loop_, timer_.get(), [this] { on_timer(); });
    resume_ = std::make_unique<DeferredWork>(loop_, *activation.lock, [this] { serve(); });
  } catch (const std::exception& e) {
    timer_watch_.reset();
    resume_.reset();
    timer_.reset();
    KVMMIO_LOG_ERROR("virtio-rng: cannot start: %s", e.what());
    return false;
  }
  interrupt_ = activation.interrupt;
  drain_.unbind();  // a requestq the driver did not make ready stays unbound
  for (const auto& q : activation.queues)
    if (q.index == kRequestQueue) drain_.bind(q.ring, interrupt_);
  waiting_ = wait_counted_ = false;
  ++counters_.activations;
  return true;
}

// A requestq made ready after DRIVER_OK: served from now on.
void VirtioRng::enable_queue(const virtio::ActiveQueue& queue) {
  if (queue.index == kRequestQueue && queue.ring && interrupt_) drain_.bind(queue.ring, interrupt_);
}

void VirtioRng::reset() {
  timer_watch_.reset();  // its callback, if waiting for our lock, gives up
  timer_.reset();        // closed: nothing stays armed
  resume_.reset();
  drain_.unbind();       // forgets the chain that waited: it was the driver's
  interrupt_ = nullptr;
  waiting_ = false;
  wait_counted_ = false;
  spans_.clear();
}

void VirtioRng::queue_notify(uint32_t queue) {
  if (queue == kRequestQueue) serve();
}

// Serves the chains the driver posted until the ring is empty, the budget
// is used up (resume_ continues) or the bucket is (the timer continues).
void VirtioRng::serve() {
  if (waiting_) return;  // the timer resumes the chain that waits
  drain_.run({.chains = kChainsPerDispatch, .bytes = kBytesPerDispatch},
             [this](const virtio::DescriptorChain& chain, uint64_t left) { return serve_chain(chain, left); });
}

virtio::ChainStep VirtioRng::serve_chain(const virtio::DescriptorChain& chain, uint64_t bytes_left) {
  if (chain.readable_bytes) {
    ++counters_.refused;
    ++counters_.requests;
    errors_.report("requestq chain has %" PRIu64
                   " device-readable bytes (virtio 1.2 5.4.6: entropy buffers are device-writable); "
                   "returned with 0 bytes",
                   chain.readable_bytes);
    return virtio::ChainStep::used(0);
  }
  // What one request gets at most: its buffers, what is left of this
  // dispatch's bytes, the burst.
  const uint64_t want = std::min({chain.writable_bytes, bytes_left, settings_.burst_bytes});
  if (!bucket_.take_n(want)) {
    wait_for_tokens(want);
    return virtio::ChainStep::paused();
  }
  wait_counted_ = false;
  const uint64_t written = fill(chain, want);
  counters_.bytes_served += written;
  ++counters_.requests;
  return virtio::ChainStep::used(static_cast<uint32_t>(written), written);
}

// getrandom(2) straight into the chain's host spans. GRND_NONBLOCK: the
// event loop never waits for the host's pool (initialised long before a
// guest runs on any kernel kvmmio supports); what could not be had is
// returned unserved, and the driver asks again.
uint64_t VirtioRng::fill(const virtio::DescriptorChain& chain, uint64_t len) {
  spans_.clear();
  virtio::chain_host_spans(memory_, chain, /*writable=*/true, 0, len, spans_);
  uint64_t written = 0;
  for (std::span<uint8_t> s : spans_) {
    while (!s.empty()) {
      const ssize_t got = ::getrandom(s.data(), s.size(), GRND_NONBLOCK);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        KVMMIO_LOG_WARN("virtio-rng: getrandom: %s; the request gets %" PRIu64 " bytes",
                        got < 0 ? std::strerror(errno) : "no bytes", written);
        return written;
      }
      written += static_cast<uint64_t>(got);
      s = s.subspan(static_cast<size_t>(got));
    }
  }
  return written;
}

void VirtioRng::wait_for_tokens(uint64_t bytes) {
  // One count per request that waits, however often its timer finds the
  // bucket still short.
  if (!wait_counted_) ++counters_.throttled;
  wait_counted_ = true;
  waiting_ = true;
  const auto wait = std::max<TokenBucket::Clock::duration>(bucket_.time_until(bytes), std::chrono::microseconds(1));
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
  itimerspec when{};
  when.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
  when.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
  if (::timerfd_settime(timer_.get(), 0, &when, nullptr) != 0) {
    // No timer: resume on the loop's next turn rather than leave the
    // request waiting for good (each turn is one budget at most).
    KVMMIO_LOG_WARN("virtio-rng: timerfd_settime: %s; resuming on the event loop", std::strerror(errno));
    waiting_ = false;
    resume_->schedule();
  }
}

// The timer fired (event-loop thread, device lock held).
void VirtioRng::on_timer() {
  uint64_t expirations = 0;
  if (::read(timer_.get(), &expirations, sizeof expirations) != sizeof expirations) return;  // spurious
  waiting_ = false;
  serve();
}

}  // namespace kvmmio::rng
