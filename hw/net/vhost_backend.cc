// SPDX-License-Identifier: BSD-2-Clause
// The vhost-net backend: one /dev/vhost-net instance per queue pair, kicked
// by the queues' ioeventfds and calling the device's irqfd (or the relay's
// eventfd) directly. The VMM only watches the vrings' error eventfds.
//
// A vring error is vhost failing to use the guest's ring: in practice a
// descriptor or ring address outside the memory table (vq_err() in the
// kernel's vhost.c), i.e. a guest that broke the ring. vhost stops that
// vring at the faulty entry and signals again on every notify, so the error
// is logged once per activation, every signal is counted, and the device
// enters DEVICE_NEEDS_RESET (2.1.2) with a configuration interrupt; the
// driver's reset tears the instances down and DRIVER_OK starts fresh ones.
// One other cause is not the guest's: TX into a removed tap. vhost batches
// small frames and hands the batch to the tap at once; when that fails
// (EBADFD: the interface is gone) the kernel reports a vring error and
// drops the batch without returning its buffers (vhost_tx_batch() in
// drivers/vhost/net.c). When the pair's tap fd is detached, the error is
// put down to the tap: logged once, counted, no reset.
#include <atomic>
#include <vector>

#include "kvmmio/base/log.h"
#include "kvmmio/net/vhost_net.h"
#include "net_backend.h"

namespace kvmmio::net {
namespace {

class VhostBackend final : public NetBackend {
 public:
  VhostBackend(const BackendContext& ctx, const virtio::DeviceActivation& act)
      : ctx_(ctx), interrupt_(act.interrupt) {
    for (uint16_t pair = 0; pair < ctx.queue_pairs; ++pair) {
      auto& p = pairs_.emplace_back();
      p.vhost = std::make_unique<VhostNet>();
      p.vhost->set_features(act.features & p.vhost->features());
      p.vhost->set_mem_table(ctx.memory);
      for (unsigned vring : {VhostNet::kRxVring, VhostNet::kTxVring}) {
        const uint32_t queue = 2u * pair + vring;
        p.errors[vring] = ctx.loop.watch_eventfd(p.err[vring].fd(),
                                                 [this, queue](uint64_t n) { ring_error(queue, n); });
        const virtio::ActiveQueue* q = find(act, queue);
        if (!q) continue;  // the driver did not set this queue up (e.g. fewer pairs)
        start(pair, vring, *q);
      }
    }
  }

  // QueueReady = 0 (QueuePFN = 0) while DRIVER_OK: the kernel must stop
  // using the ring now (2.6.1, 4.2.2), and let go of the queue's
  // ioeventfd. The transport keeps that assigned: the guest's kicks while
  // the queue is stopped wait in it, one spurious kick at the restart.
  void reset_queue(uint32_t queue) override {
    const unsigned pair = queue / 2, vring = queue % 2;
    if (pair >= pairs_.size() || !pairs_[pair].running[vring]) return;
    pairs_[pair].running[vring] = false;
    try {
      pairs_[pair].vhost->stop_vring(vring);
      pairs_[pair].vhost->set_vring_kick(vring, -1);
    } catch (const std::exception& e) {
      // The instance is in an unknown state: it must not go on with the ring.
      if (const uint64_t n = ctx_.repeats.next())
        KVMMIO_LOG_ERROR("net %s: stopping vhost vring %u of pair %u: %s (#%llu)", ctx_.tap.name().c_str(),
                         vring, pair, e.what(), static_cast<unsigned long long>(n));
      if (interrupt_) interrupt_->needs_reset("vhost-net could not stop a queue");
    }
  }

  // ... and QueueReady = 1 again: a fresh ring (indices 0), maybe elsewhere.
  void enable_queue(const virtio::ActiveQueue& queue) override {
    const unsigned pair = queue.index / 2, vring = queue.index % 2;
    if (pair >= pairs_.size() || pairs_[pair].running[vring]) return;
    if (queue.notify_fd < 0 || queue.interrupt_fd < 0) return;
    try {
      start(pair, vring, queue);
    } catch (const std::exception& e) {
      if (const uint64_t n = ctx_.repeats.next())
        KVMMIO_LOG_ERROR("net %s: restarting vhost vring %u of pair %u: %s (#%llu)",
                         ctx_.tap.name().c_str(), vring, pair, e.what(), static_cast<unsigned long long>(n));
      if (interrupt_) interrupt_->needs_reset("vhost-net could not restart a queue");
    }
  }

  // After the tap was removed and attached again: the tap fds are the same
  // files, but vhost polls their sockets from NET_SET_BACKEND on, so detach
  // and attach each vring to restart that from the new interface's state.
  void tap_restored(bool reattached) override {
    if (!reattached) return;  // down and up again: vhost resumes by itself
    tap_error_reported_ = false;
    for (size_t pair = 0; pair < pairs_.size(); ++pair)
      for (unsigned vring : {VhostNet::kRxVring, VhostNet::kTxVring}) {
        if (!pairs_[pair].running[vring]) continue;
        try {
          pairs_[pair].vhost->set_backend(vring, -1);
          pairs_[pair].vhost->set_backend(vring, ctx_.tap.fd(static_cast<unsigned>(pair)));
        } catch (const std::exception& e) {
          KVMMIO_LOG_ERROR("net %s: re-attaching vhost vring %u of pair %zu: %s",
                           ctx_.tap.name().c_str(), vring, pair, e.what());
        }
      }
  }

  ~VhostBackend() override {
    for (auto& p : pairs_)
      for (unsigned vring : {VhostNet::kRxVring, VhostNet::kTxVring}) {
        if (!p.running[vring]) continue;
        try {
          p.vhost->stop_vring(vring);
        } catch (const std::exception& e) {
          if (const uint64_t n = ctx_.repeats.next())  // at every reset while it fails
            KVMMIO_LOG_WARN("net %s: stopping vhost vring %u: %s (#%llu)", ctx_.tap.name().c_str(),
                            vring, e.what(), static_cast<unsigned long long>(n));
        }
      }
  }

 private:
  // On the event-loop thread, without the device lock: the watch is
  // removed under that lock when the device resets (which waits for this
  // callback), and needs_reset() is made of atomic operations.
  void ring_error(uint32_t queue, uint64_t signals) {
    ctx_.counters.vhost_errors += signals;
    if (!ctx_.tap.attached(queue / 2)) {
      if (!tap_error_reported_.exchange(true))
        KVMMIO_LOG_WARN("net %s: vhost-net could not send into the removed tap (queue %u): the "
                        "frames it had batched are dropped and their buffers kept by the kernel",
                        ctx_.tap.name().c_str(), queue);
      return;
    }
    if (reported_.exchange(true)) return;
    // Once per activation: a guest that breaks its ring after every reset
    // repeats it, so it is a counted, rate-limited guest error.
    ctx_.errors.report("vhost-net cannot use queue %u (a descriptor or ring outside guest RAM?); "
                       "the device needs a reset", queue);
    if (interrupt_) interrupt_->needs_reset("vhost-net reported a vring error");
  }

  // Hands one queue's ring, kick and call fds to vhost, then the tap.
  void start(unsigned pair, unsigned vring, const virtio::ActiveQueue& q) {
    Pair& p = pairs_[pair];
    p.vhost->setup_vring(ctx_.memory, {vring, static_cast<uint16_t>(q.layout.size), 0, q.layout.desc,
                                       q.layout.avail, q.layout.used, q.notify_fd, q.interrupt_fd,
                                       p.err[vring].fd(), ctx_.poll_us});
    p.vhost->set_backend(vring, ctx_.tap.fd(pair));
    p.running[vring] = true;
  }

  static const virtio::ActiveQueue* find(const virtio::DeviceActivation& act, uint32_t index) {
    for (const auto& q : act.queues)
      if (q.index == index && q.notify_fd >= 0 && q.interrupt_fd >= 0) return &q;
    return nullptr;
  }

  struct Pair {
    std::unique_ptr<VhostNet> vhost;
    EventFd err[2];
    EventLoop::Registration errors[2];
    bool running[2] = {false, false};
  };
  BackendContext ctx_;
  virtio::VirtioInterrupt* interrupt_;
  std::atomic<bool> reported_{false};  // once per activation
  std::atomic<bool> tap_error_reported_{false};  // once per removal of the tap
  std::vector<Pair> pairs_;
};

}  // namespace

std::unique_ptr<NetBackend> make_vhost_backend(const BackendContext& ctx,
                                               const virtio::DeviceActivation& activation) {
  return std::make_unique<VhostBackend>(ctx, activation);
}

}  // namespace kvmmio::net
