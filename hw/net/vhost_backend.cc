// The vhost-net backend: one /dev/vhost-net instance per queue pair, kicked
// by the queues' ioeventfds and calling the device's irqfd (or the relay's
// eventfd) directly. The VMM only watches the vrings' error eventfds.
#include <vector>

#include "kvmmio/log.h"
#include "kvmmio/net/vhost_net.h"
#include "net_backend.h"

namespace kvmmio::net {
namespace {

class VhostBackend final : public NetBackend {
 public:
  VhostBackend(const BackendContext& ctx, const virtio::DeviceActivation& act) : ctx_(ctx) {
    for (uint16_t pair = 0; pair < ctx.queue_pairs; ++pair) {
      auto& p = pairs_.emplace_back();
      p.vhost = std::make_unique<VhostNet>();
      p.vhost->set_features(act.features & p.vhost->features());
      p.vhost->set_mem_table(ctx.memory);
      for (unsigned vring : {VhostNet::kRxVring, VhostNet::kTxVring}) {
        const uint32_t queue = 2u * pair + vring;
        const virtio::ActiveQueue* q = find(act, queue);
        if (!q) continue;  // the driver did not set this queue up (e.g. fewer pairs)
        p.vhost->setup_vring(ctx.memory, {vring, static_cast<uint16_t>(q->layout.size), 0,
                                          q->layout.desc, q->layout.avail, q->layout.used,
                                          q->kick_fd, q->call_fd, p.err[vring].fd()});
        p.errors[vring] = ctx.loop.watch_eventfd(p.err[vring].fd(), [this, queue](uint64_t n) {
          ctx_.counters.vhost_errors += n;
          KVMMIO_LOG_WARN("net %s: vhost reported an error on queue %u", ctx_.tap.name().c_str(), queue);
        });
        p.vhost->set_backend(vring, ctx.tap.fd(pair));
        p.running[vring] = true;
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
          KVMMIO_LOG_WARN("net %s: stopping vhost vring %u: %s", ctx_.tap.name().c_str(), vring, e.what());
        }
      }
  }

 private:
  static const virtio::ActiveQueue* find(const virtio::DeviceActivation& act, uint32_t index) {
    for (const auto& q : act.queues)
      if (q.index == index && q.kick_fd >= 0 && q.call_fd >= 0) return &q;
    return nullptr;
  }

  struct Pair {
    std::unique_ptr<VhostNet> vhost;
    EventFd err[2];
    EventLoop::Registration errors[2];
    bool running[2] = {false, false};
  };
  BackendContext ctx_;
  std::vector<Pair> pairs_;
};

}  // namespace

std::unique_ptr<NetBackend> make_vhost_backend(const BackendContext& ctx,
                                               const virtio::DeviceActivation& activation) {
  return std::make_unique<VhostBackend>(ctx, activation);
}

}  // namespace kvmmio::net
