// SPDX-License-Identifier: BSD-2-Clause
// VirtioNet: features, configuration space, backend choice, control queue.
#include "kvmmio/net/virtio_net.h"

#include <linux/if_tun.h>
#include <net/if.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/net/vhost_net.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/descriptor_chain.h"
#include "net_backend.h"

namespace kvmmio::net {
namespace {

constexpr uint64_t bit(unsigned n) { return 1ull << n; }

// Offloads both backends can honour: the tap applies them (vnet header).
constexpr uint64_t kOffloadFeatures = bit(spec::kFCsum) | bit(spec::kFGuestCsum) |
                                      bit(spec::kFHostTso4) | bit(spec::kFHostTso6) |
                                      bit(spec::kFGuestTso4) | bit(spec::kFGuestTso6);

}  // namespace

unsigned tap_offloads(uint64_t f) {
  unsigned flags = 0;
  if (f & bit(spec::kFGuestCsum)) {
    flags |= TUN_F_CSUM;
    if (f & bit(spec::kFGuestTso4)) flags |= TUN_F_TSO4;
    if (f & bit(spec::kFGuestTso6)) flags |= TUN_F_TSO6;
  }
  return flags;
}

VirtioNet::VirtioNet(const NetOptions& options, unsigned index, const GuestMemory& memory,
                     EventLoop& loop)
    : VirtioNet(options, index, memory, loop, Tap(options.tap, options.queue_pairs)) {}

VirtioNet::VirtioNet(const NetOptions& options, unsigned index, const GuestMemory& memory,
                     EventLoop& loop, Tap tap)
    : options_(options),
      mac_(options.mac.value_or(default_mac(index))),
      memory_(memory),
      loop_(loop),
      tap_(std::move(tap)),
      log_name_("net " + tap_.name()) {
  if (tap_.queues() != options.queue_pairs)
    throw std::invalid_argument("VirtioNet: the tap has " + std::to_string(tap_.queues()) +
                                " queues for " + std::to_string(options.queue_pairs) + " queue pairs");
  switch (options.vhost) {
    case VhostMode::kOn:
      if (tap_.is_socketpair())
        throw UserError("net " + tap_.name() + ": vhost=on needs a real tap, not a socketpair");
      { VhostNet probe; }  // throws UserError naming the module when missing
      use_vhost_ = true;
      break;
    case VhostMode::kOff:
      use_vhost_ = false;
      break;
    case VhostMode::kAuto:
      if (tap_.is_socketpair()) break;
      use_vhost_ = VhostNet::available();
      if (!use_vhost_)
        KVMMIO_LOG_WARN("net %s: %s cannot be opened, using the userspace backend "
                        "(modprobe vhost_net for the kernel one)", options.tap.c_str(), VhostNet::kPath);
      break;
  }
  // The tap's own side comes up with the VMM; the guest's link state is
  // reported through the config space.
  tap_.set_link(true);
}

VirtioNet::~VirtioNet() = default;

uint64_t VirtioNet::device_features() const {
  uint64_t f = bit(spec::kFMac) | bit(spec::kFStatus) | bit(spec::kFMrgRxbuf) | kOffloadFeatures;
  if (options_.mtu) f |= bit(spec::kFMtu);
  if (has_ctrl_queue()) f |= bit(spec::kFCtrlVq) | bit(spec::kFMq);
  return f;
}

uint32_t VirtioNet::num_queues() const { return ctrl_queue_index() + (has_ctrl_queue() ? 1 : 0); }

uint32_t VirtioNet::config_size() const { return sizeof(spec::NetConfig); }

void VirtioNet::read_config(uint32_t offset, std::span<uint8_t> data) {
  spec::NetConfig c{};
  std::memcpy(c.mac, mac_.data(), 6);
  c.status = link_up_.load() ? spec::kStatusLinkUp : 0;
  c.max_virtqueue_pairs = options_.queue_pairs;
  c.mtu = options_.mtu;
  std::memcpy(data.data(), reinterpret_cast<const uint8_t*>(&c) + offset, data.size());
}

bool VirtioNet::accept_features(uint64_t f) {
  // 5.1.3.1: MQ needs CTRL_VQ; the offloads need their checksum features.
  if ((f & bit(spec::kFMq)) && !(f & bit(spec::kFCtrlVq))) return false;
  if ((f & (bit(spec::kFHostTso4) | bit(spec::kFHostTso6))) && !(f & bit(spec::kFCsum))) return false;
  if ((f & (bit(spec::kFGuestTso4) | bit(spec::kFGuestTso6))) && !(f & bit(spec::kFGuestCsum)))
    return false;
  return true;
}

bool VirtioNet::backend_owns_queue(uint32_t queue) const {
  return use_vhost_ && queue < ctrl_queue_index();
}

bool VirtioNet::activate(const virtio::DeviceActivation& activation) {
  interrupt_ = activation.interrupt;
  ctrl_ring_ = nullptr;
  for (const auto& q : activation.queues)
    if (has_ctrl_queue() && q.index == ctrl_queue_index()) ctrl_ring_ = q.ring;
  const BackendContext ctx{memory_, loop_, tap_, counters_, errors_, repeats_, *activation.lock,
                           options_.queue_pairs};
  // Removed and created again while the device was reset (no monitor then
  // to notice): attach now, or the fds would stay dead. Gone for good: the
  // monitor attaches when the name returns.
  if (!tap_.attached(0) && ::if_nametoindex(tap_.name().c_str()) != 0) {
    try {
      tap_.reattach();
      tap_.set_link(true);
      ++counters_.tap_reattached;
    } catch (const std::exception& e) {
      if (const uint64_t n = repeats_.next())  // at every DRIVER_OK while it fails
        KVMMIO_LOG_WARN("net %s: cannot attach to the interface of that name: %s (#%llu)",
                        tap_.name().c_str(), e.what(), static_cast<unsigned long long>(n));
    }
  }
  try {
    tap_.set_vnet_hdr_size(static_cast<int>(spec::net_hdr_size(activation.features)));
    tap_.set_offload(tap_offloads(activation.features));
    backend_ = use_vhost_ ? make_vhost_backend(ctx, activation) : make_user_backend(ctx, activation);
  } catch (const std::exception& e) {
    // At every DRIVER_OK while it fails (a reset storm repeats it); the
    // transport counts the resulting needs_reset.
    if (const uint64_t n = repeats_.next())
      KVMMIO_LOG_ERROR("net %s: cannot start the %s backend: %s (#%llu)", options_.tap.c_str(),
                       use_vhost_ ? "vhost-net" : "userspace", e.what(), static_cast<unsigned long long>(n));
    backend_.reset();
    return false;
  }
  if (has_ctrl_queue()) {
    try {
      ctrl_resume_ = std::make_unique<DeferredWork>(loop_, *activation.lock, [this] {
        if (ctrl_ring_) process_ctrl(*ctrl_ring_);
      });
    } catch (const std::exception& e) {
      if (const uint64_t n = repeats_.next())
        KVMMIO_LOG_ERROR("net %s: cannot start the control queue: %s (#%llu)", options_.tap.c_str(),
                         e.what(), static_cast<unsigned long long>(n));
      backend_.reset();
      return false;
    }
  }
  ++counters_.activations;
  tap_offloads_ = tap_offloads(activation.features);
  vnet_hdr_size_ = static_cast<int>(spec::net_hdr_size(activation.features));
  try {
    link_up_ = tap_.link_up();
  } catch (const std::exception&) {
    link_up_ = false;  // the interface is gone
  }
  if (tap_.is_socketpair()) return true;  // no interface to watch
  try {
    monitor_ = std::make_unique<TapMonitor>(loop_, *activation.lock, tap_.name(),
                                            [this](TapMonitor::Event e) { on_tap_event(e); });
  } catch (const std::exception& e) {
    if (const uint64_t n = repeats_.next())
      KVMMIO_LOG_WARN("net %s: cannot watch the tap's link (%s): its faults will only show as "
                      "tap_errors (#%llu)", tap_.name().c_str(), e.what(), static_cast<unsigned long long>(n));
  }
  return true;
}

void VirtioNet::queue_notify(uint32_t queue) {
  if (has_ctrl_queue() && queue == ctrl_queue_index()) {
    if (ctrl_ring_) process_ctrl(*ctrl_ring_);
    return;
  }
  if (backend_) backend_->queue_notify(queue);
}

void VirtioNet::reset_queue(uint32_t queue) {
  if (backend_) backend_->reset_queue(queue);
}

void VirtioNet::enable_queue(const virtio::ActiveQueue& queue) {
  if (has_ctrl_queue() && queue.index == ctrl_queue_index()) {
    ctrl_ring_ = queue.ring;  // the transport's ring object: the same pointer, configured afresh
    return;
  }
  if (backend_) backend_->enable_queue(queue);
}

void VirtioNet::reset() {
  ctrl_resume_.reset();
  monitor_.reset();
  backend_.reset();
  ctrl_ring_ = nullptr;
  interrupt_ = nullptr;
}

// Control queue (5.1.6.5): a command is a readable CtrlHdr and data, then
// one writable ack byte. kvmmio accepts the receive-mode, MAC-filter and
// queue-pair commands (the tap delivers every frame anyway; all pairs are
// always served) and answers anything else with VIRTIO_NET_ERR. At most
// kCtrlCommandsPerDispatch per call; the rest on a later turn of the loop.
void VirtioNet::process_ctrl(virtio::SplitQueue& ring) {
  virtio::DescriptorChain chain;
  for (unsigned n = 0;; ++n) {
    if (n == kCtrlCommandsPerDispatch) {
      ++counters_.budget_yields;
      if (ctrl_resume_) ctrl_resume_->schedule();
      break;
    }
    if (ring.pop(chain) != virtio::SplitQueue::PopResult::kChain) break;
    ++counters_.ctrl_commands;
    spec::CtrlHdr hdr{};
    uint8_t ack = spec::kCtrlErr;
    if (virtio::read_from_chain(memory_, chain, 0, {reinterpret_cast<uint8_t*>(&hdr), sizeof(hdr)}) ==
        sizeof(hdr)) {
      if (hdr.cls == spec::kCtrlClassMq && hdr.cmd == spec::kCtrlMqVqPairsSet) {
        uint16_t pairs = 0;
        if (virtio::read_from_chain(memory_, chain, sizeof(hdr),
                                    {reinterpret_cast<uint8_t*>(&pairs), sizeof(pairs)}) == 2 &&
            pairs >= spec::kMqVqPairsMin && pairs <= options_.queue_pairs)
          ack = spec::kCtrlOk;
      } else if (hdr.cls == spec::kCtrlClassRx || hdr.cls == spec::kCtrlClassMac) {
        ack = spec::kCtrlOk;
      }
    }
    // The ack is the first device-writable byte (everything before it is
    // driver-readable), and the used length is what was written: 1 byte,
    // or 0 for a chain with nothing writable (a driver bug, answered with
    // nothing rather than with a length that covers bytes never written).
    const size_t written = virtio::write_to_chain(memory_, chain, 0, {&ack, 1});
    ring.push_used(chain.head, static_cast<uint32_t>(written));
  }
  if (ring.should_interrupt() && interrupt_) interrupt_->signal_used();
}

// Tap faults (docs/virtio-net.md, "Faults"). The guest learns of them
// through the link bit of the config space and a configuration-change
// interrupt (5.1.4: Linux turns its carrier off and on), so it stops
// sending into a dead tap and resumes when it works again. Callbacks come
// from the event loop holding the device lock, as the backends' do.
void VirtioNet::on_tap_event(TapMonitor::Event event) {
  const char* name = tap_.name().c_str();
  switch (event) {
    case TapMonitor::Event::kDown:
      KVMMIO_LOG_WARN("net %s: the tap went down: the guest's link is down until it is up again", name);
      set_guest_link(false);
      break;
    case TapMonitor::Event::kUp:
      KVMMIO_LOG_INFO("net %s: the tap is up again", name);
      if (backend_) backend_->tap_restored(false);
      set_guest_link(true);
      break;
    case TapMonitor::Event::kRemoved:
      // The fds stay open but detached; kvmmio does not create the
      // interface again by itself: whoever removed it meant something.
      ++counters_.tap_removed;
      KVMMIO_LOG_WARN("net %s: the tap was removed: the guest's link is down; kvmmio attaches "
                      "again when an interface of that name appears (ip tuntap add %s mode tap "
                      "vnet_hdr%s)", name, name, options_.queue_pairs > 1 ? " multi_queue" : "");
      set_guest_link(false);
      break;
    case TapMonitor::Event::kAppeared:
      try {
        tap_.reattach();
        tap_.set_vnet_hdr_size(vnet_hdr_size_);
        tap_.set_offload(tap_offloads_);
        tap_.set_link(true);
      } catch (const std::exception& e) {
        if (!reattach_failing_)
          KVMMIO_LOG_ERROR("net %s: an interface of that name appeared but cannot be attached: %s; "
                           "the guest's link stays down, retrying every second", name, e.what());
        reattach_failing_ = true;
        monitor_->retry_appeared(std::chrono::seconds(1));
        break;
      }
      reattach_failing_ = false;
      ++counters_.tap_reattached;
      KVMMIO_LOG_INFO("net %s: attached to the new interface and brought it up", name);
      if (backend_) backend_->tap_restored(true);
      set_guest_link(true);
      break;
  }
}

void VirtioNet::set_guest_link(bool up) {
  if (link_up_.exchange(up) == up) return;
  ++(up ? counters_.tap_up : counters_.tap_down);
  if (interrupt_) interrupt_->signal_config_change();
}

}  // namespace kvmmio::net
