// SPDX-License-Identifier: BSD-2-Clause
// The userspace backend: the VMM moves packets between the rings and the
// tap. TX runs when the guest notifies (queue_notify, device lock held); RX
// runs on the event-loop thread when the tap is readable, under the
// device lock. With no RX buffers posted, RX pauses (the tap is no longer
// watched) until the guest notifies the RX queue; a frame already read from
// the tap waits, so nothing is lost. Frames are copied with their 12-byte
// virtio-net header, which the tap (IFF_VNET_HDR) reads and writes as is.
//
// A failing tap (down: writes fail with EIO; removed: reads and writes fail
// with EBADFD and the fd polls as an error forever) is counted in
// tap_errors and logged once per run of failures; TX drops the frames and
// returns the buffers, RX stops watching the fd, so nothing spins, until
// the device reports the tap restored (tap_restored()).
//
// Work per dispatch is bounded (VirtioNet::kTx*PerDispatch,
// kRxFramesPerDispatch): TX drains its ring with QueueDrain, which at the
// budget keeps the guest's notifies suppressed, and re-queues itself on the
// event loop (DeferredWork);
// RX simply returns, and the still-readable tap (level-triggered) brings it
// back after the other ready fds had their turn.
//
// RX does not run QueueDrain: that loop pops a chain and hands it to the
// device, driven by the driver's notifies, and stops at a budget with
// notifies suppressed. RX is driven by the tap: a frame is read first and
// then pops as many chains as it fills (MRG_RXBUF), one at a time; and RX
// never suppresses the guest's notifies, since with the ring empty a
// notify is the one thing that restarts it. Its budget is frames, not
// chains.
//
// Host memory per queue pair is fixed whatever the guest does: one frame
// buffer (header + kMaxFrame), the first descriptor chain of the frame being
// placed (at most the queue size in segments), and for every further
// buffer the frame filled only its head and length (UsedSlot, 8 bytes), at
// most the queue size of them. A driver cannot have more buffers in flight
// than its queue has entries; a frame that would need more (tiny buffers,
// or heads made available again while still in flight) is dropped, its
// buffers returned with length 0, counted in rx_dropped and reported as a
// guest error. So num_buffers (a 16-bit field) never exceeds the queue
// size (at most 256 here, 32768 by the spec): it cannot be truncated.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "kvmmio/base/deferred_work.h"
#include "kvmmio/base/log.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/descriptor_chain.h"
#include "kvmmio/virtio/queue_drain.h"
#include "net_backend.h"

namespace kvmmio::net {
namespace {

using virtio::DescriptorChain;
using virtio::SplitQueue;

constexpr size_t kMaxHdr = sizeof(spec::NetHdrV1);
constexpr size_t kMaxFrame = 65536 + 14 + 4;  // GSO super-frame plus Ethernet header and VLAN
constexpr size_t kNumBuffersOffset = offsetof(spec::NetHdrV1, num_buffers);
// Buffers one frame may take: num_buffers must be able to count them.
static_assert(VirtioNet::kQueueSize <= UINT16_MAX);

class UserBackend final : public NetBackend {
 public:
  UserBackend(const BackendContext& ctx, const virtio::DeviceActivation& act)
      : ctx_(ctx),
        interrupt_(act.interrupt),
        mergeable_(act.features & (1ull << spec::kFMrgRxbuf)),
        hdr_(spec::net_hdr_size(act.features)),
        tx_resume_(ctx.loop, ctx.lock, [this] { resume_tx(); }) {
    for (uint16_t i = 0; i < ctx.queue_pairs; ++i) pairs_.emplace_back(*this);
    for (const auto& q : act.queues) {
      if (q.index >= 2u * ctx.queue_pairs || !q.ring) continue;
      Pair& p = pairs_[q.index / 2];
      (q.index % 2 ? p.tx : p.rx) = q.ring;
    }
    for (Pair& p : pairs_) p.tx_drain.bind(p.tx, interrupt_);
    for (uint16_t i = 0; i < ctx.queue_pairs; ++i) {
      pairs_[i].index = i;
      pairs_[i].frame.resize(hdr_ + kMaxFrame);
      pairs_[i].held.reserve(VirtioNet::kQueueSize);  // its bound: it never grows past this
      if (pairs_[i].rx) watch_tap(pairs_[i]);
    }
  }

  // Called under the device lock (reset): the tap watches are
  // DeviceLock::Watches, which may go under it.
  ~UserBackend() override = default;

  void queue_notify(uint32_t queue) override {
    if (queue >= 2u * pairs_.size()) return;
    Pair& p = pairs_[queue / 2];
    if (queue % 2) {
      transmit(p);
    } else if (p.rx_paused && p.rx) {
      // The guest posted RX buffers: finish the waiting frame, then listen again.
      if (receive(p)) {
        p.rx_paused = false;
        if (!p.tap_failed) watch_tap(p);
      }
    }
  }

  // QueueReady = 0 while DRIVER_OK: the ring is stopped (pops nothing,
  // takes no used entries). The buffers held for a frame belong to it: the
  // frame is dropped, so they are never pushed into the ring that replaces
  // it.
  void reset_queue(uint32_t queue) override {
    if (queue >= 2u * pairs_.size() || queue % 2) return;
    Pair& p = pairs_[queue / 2];
    if (p.held.empty()) return;  // a frame that placed nothing yet waits for the new ring
    p.held.clear();
    p.frame_len = 0;
    ++ctx_.counters.rx_dropped;
  }

  void enable_queue(const virtio::ActiveQueue& q) override {
    if (q.index >= 2u * pairs_.size() || !q.ring) return;
    Pair& p = pairs_[q.index / 2];
    (q.index % 2 ? p.tx : p.rx) = q.ring;
    if (q.index % 2) p.tx_drain.bind(p.tx, interrupt_);
    if (q.index % 2 == 0 && !p.tap_watch && !p.rx_paused && !p.tap_failed) watch_tap(p);
  }

  void tap_restored(bool reattached) override {
    (void)reattached;  // same fds either way: listen on them again
    for (auto& p : pairs_) {
      if (!p.tap_failed) continue;
      p.tap_failed = false;
      if (p.rx && !p.rx_paused) watch_tap(p);
    }
    tx_failing_ = false;
  }

 private:
  // A buffer filled for the waiting frame: what push_used() will need.
  using UsedSlot = virtio::SplitQueue::UsedElement;

  struct Pair {
    explicit Pair(UserBackend& backend)
        : tx_drain([&backend] {
            ++backend.ctx_.counters.budget_yields;
            backend.tx_resume_.schedule();
          }) {}
    uint16_t index = 0;
    SplitQueue* rx = nullptr;
    SplitQueue* tx = nullptr;
    DeviceLock::Watch tap_watch;
    bool rx_paused = false;
    bool tap_failed = false;          // reads failed: not watched until restored
    bool tx_more = false;             // TX stopped at its budget: tx_resume_ continues
    virtio::QueueDrain tx_drain;      // TX: budget stops count a yield and schedule tx_resume_
    std::vector<uint8_t> frame;       // header + frame read from the tap
    size_t frame_len = 0;             // 0: none waiting
    size_t placed = 0;                // bytes of it already in guest buffers
    DescriptorChain first;            // the frame's first buffer: num_buffers goes there
    std::vector<UsedSlot> held;       // buffers filled for it, not yet used (<= queue size)
    DescriptorChain scratch;
  };

  void watch_tap(Pair& p) {
    p.tap_watch = ctx_.lock.watch(ctx_.loop, ctx_.tap.fd(p.index), [this, &p] { on_tap_readable(p); });
  }

  // The event loop, holding the device lock.
  void on_tap_readable(Pair& p) {
    if (!receive(p)) {
      p.rx_paused = true;
      ++ctx_.counters.rx_stalls;
      p.tap_watch = {};  // from inside its own callback: allowed, no wait
    } else if (p.tap_failed) {
      p.tap_watch = {};  // a removed tap polls as an error forever
    }
  }

  // Moves frames from the tap into RX buffers until the tap is drained or
  // the budget is used up (true), or the guest's buffers run out (false;
  // the frame waits).
  bool receive(Pair& p) {
    bool delivered = false;
    bool ok = true;
    for (unsigned frames = 0;; ++frames) {
      if (p.frame_len == 0 && frames == VirtioNet::kRxFramesPerDispatch) {
        ++ctx_.counters.budget_yields;  // the tap is still readable: the loop comes back
        break;
      }
      if (p.frame_len == 0) {
        const ssize_t n = ::read(ctx_.tap.fd(p.index), p.frame.data(), p.frame.size());
        if (n < 0) {
          if (errno == EINTR) continue;
          if (errno != EAGAIN) {
            ++ctx_.counters.tap_errors;
            if (!p.tap_failed)
              KVMMIO_LOG_WARN("net %s: reading queue %u of the tap failed (%s): receive stops until "
                              "the tap works again", ctx_.tap.name().c_str(), p.index, std::strerror(errno));
            p.tap_failed = true;
          }
          break;
        }
        if (static_cast<size_t>(n) <= hdr_) continue;  // nothing but a header: ignore
        p.frame_len = static_cast<size_t>(n);
        p.placed = 0;
      }
      if (!place(p)) {
        ok = false;
        break;
      }
      delivered = true;
    }
    if (delivered && p.rx->should_interrupt()) interrupt_->signal_used();
    return ok;
  }

  // Puts the waiting frame into guest buffers: one chain, or with
  // MRG_RXBUF as many as it takes (num_buffers says how many, 5.1.6.4), at
  // most as many as the queue has entries (see the top of this file).
  bool place(Pair& p) {
    const size_t limit = p.rx->layout().size;
    while (p.placed < p.frame_len) {
      if (p.held.size() >= limit) {
        ctx_.errors.report("RX queue %u: a %zu-byte frame filled %zu buffers, as many as the queue "
                           "has entries, and is still not complete (buffers too small, or made "
                           "available again while in use); the frame is dropped",
                           2u * p.index, p.frame_len - hdr_, p.held.size());
        drop(p);
        return true;
      }
      DescriptorChain& chain = p.held.empty() ? p.first : p.scratch;
      const auto r = p.rx->pop(chain);
      if (r == SplitQueue::PopResult::kEmpty) return false;
      if (r == SplitQueue::PopResult::kBroken) {  // the transport reported it
        drop(p);
        return true;
      }
      const std::span<const uint8_t> rest(p.frame.data() + p.placed, p.frame_len - p.placed);
      const size_t n = virtio::write_to_chain(ctx_.memory, chain, 0, rest);
      p.held.push_back({chain.head, static_cast<uint32_t>(n)});
      p.placed += n;
      if (!mergeable_ && p.placed < p.frame_len) {
        // 5.1.6.3.1: without MRG_RXBUF one buffer must hold the frame.
        ++ctx_.counters.rx_dropped;
        p.held.back().written = 0;
        break;
      }
      if (n == 0 && chain.writable_bytes == 0) {  // a buffer with no room: useless
        ++ctx_.counters.rx_dropped;
        break;
      }
    }
    if (p.placed >= p.frame_len) {
      // num_buffers, where the header has it (not the legacy 10-byte one).
      const uint16_t buffers = static_cast<uint16_t>(p.held.size());  // <= limit: exact
      if (hdr_ > kNumBuffersOffset)
        virtio::write_to_chain(ctx_.memory, p.first, kNumBuffersOffset,
                               {reinterpret_cast<const uint8_t*>(&buffers), sizeof(buffers)});
      ++ctx_.counters.rx_packets;
      ctx_.counters.rx_bytes += p.frame_len - hdr_;
    }
    // All of the frame's buffers at once: a driver that saw the first
    // before the rest would find fewer than num_buffers and drop the frame.
    p.rx->push_used(p.held);
    p.held.clear();
    p.frame_len = 0;
    return true;
  }

  void drop(Pair& p) {
    for (UsedSlot& u : p.held) u.written = 0;
    p.rx->push_used(p.held);
    p.held.clear();
    p.frame_len = 0;
    ++ctx_.counters.rx_dropped;
  }

  // Sends the chains the guest made available, up to the budget; the rest
  // waits for tx_resume_ (QueueDrain: notifies suppressed meanwhile).
  void transmit(Pair& p) {
    const virtio::DrainResult r = p.tx_drain.run(
        {.chains = VirtioNet::kTxChainsPerDispatch, .bytes = VirtioNet::kTxBytesPerDispatch},
        [this, &p](const DescriptorChain& chain, uint64_t) {
          send_chain(p, chain);
          return virtio::ChainStep::used(0, chain.readable_bytes);
        });
    p.tx_more = r.stop == virtio::DrainStop::kBudget;
  }

  void send_chain(Pair& p, const DescriptorChain& chain) {
    const size_t n = virtio::read_from_chain(ctx_.memory, chain, 0, {tx_buf_, sizeof(tx_buf_)});
    if (n <= hdr_ || chain.readable_bytes > hdr_ + kMaxFrame) return;
    if (::write(ctx_.tap.fd(p.index), tx_buf_, n) == static_cast<ssize_t>(n)) {
      ++ctx_.counters.tx_packets;
      ctx_.counters.tx_bytes += n - hdr_;
      tx_failing_ = false;
      return;
    }
    // Link down (EIO) or tap removed (EBADFD): the frame is dropped, as a
    // cable would drop it; logged once per run of failures.
    ++ctx_.counters.tap_errors;
    if (!tx_failing_)
      KVMMIO_LOG_WARN("net %s: writing to the tap failed (%s): guest frames are dropped "
                      "until it works again", ctx_.tap.name().c_str(), std::strerror(errno));
    tx_failing_ = true;
  }

  // The event loop, holding the device lock: TX that stopped at its budget.
  void resume_tx() {
    for (auto& p : pairs_)
      if (p.tx_more) transmit(p);
  }

  BackendContext ctx_;
  virtio::VirtioInterrupt* interrupt_;
  bool mergeable_;
  size_t hdr_;  // the virtio-net header's size: 12, or 10 (legacy without MRG_RXBUF)
  std::deque<Pair> pairs_;  // a deque: Pairs never move (their drains call back into this)
  bool tx_failing_ = false;  // the last tap write failed (logging state)
  uint8_t tx_buf_[kMaxHdr + kMaxFrame];
  DeferredWork tx_resume_;  // last: dropped first, its work uses the above
};

}  // namespace

std::unique_ptr<NetBackend> make_user_backend(const BackendContext& ctx,
                                              const virtio::DeviceActivation& activation) {
  return std::make_unique<UserBackend>(ctx, activation);
}

}  // namespace kvmmio::net
