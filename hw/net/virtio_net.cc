// SPDX-License-Identifier: BSD-2-Clause
// VirtioNet: features, configuration space, backend choice; the control
// queue and the tap supervision are parts of their own (control_queue.h,
// tap_supervisor.h).
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
#include "bridge.h"
#include "control_queue.h"
#include "net_backend.h"
#include "tap_supervisor.h"

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

VirtioNet::VirtioNet(const NetOptions& options, const GuestMemory& memory, EventLoop& loop)
    : VirtioNet(options, memory, loop, Tap(options.tap, options.queue_pairs)) {}

VirtioNet::VirtioNet(const NetOptions& options, const GuestMemory& memory, EventLoop& loop, Tap tap)
    : options_(options),
      mac_(options.mac.value_or(default_mac(options.tap))),
      memory_(memory),
      loop_(loop),
      tap_(std::move(tap)),
      log_name_("net " + tap_.name()) {
  if (tap_.queues() != options.queue_pairs)
    throw std::invalid_argument("VirtioNet: the tap has " + std::to_string(tap_.queues()) +
                                " queues for " + std::to_string(options.queue_pairs) + " queue pairs");
  if (!options.bridge.empty()) {
    if (tap_.is_socketpair())
      throw UserError("net " + tap_.name() + ": bridge= needs a real tap, not a socketpair");
    add_to_bridge(tap_.name(), options.bridge, words_of(options.words));
  }
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
                        "(modprobe vhost_net for the kernel one)%s", options.tap.c_str(), VhostNet::kPath,
                        options.poll_us ? "; poll_us, vhost-net's busy polling, does nothing there" : "");
      break;
  }
  // The tap's own side comes up with the VMM; the guest's link state is
  // reported through the config space.
  tap_.set_link(true);
}

VirtioNet::~VirtioNet() = default;

void VirtioNet::visit_counters(const virtio::CounterVisitor& visit) const {
  NetSettings settings;
  settings.vhost = use_vhost_;
  settings.poll_us = use_vhost_ ? options_.poll_us : 0;
  settings.each(visit);
  counters_.each(visit);
}

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
  virtio::SplitQueue* ctrl_ring = nullptr;
  for (const auto& q : activation.queues)
    if (has_ctrl_queue() && q.index == ctrl_queue_index()) ctrl_ring = q.ring;
  const BackendContext ctx{memory_, loop_, tap_, counters_, errors_, repeats_, *activation.lock,
                           options_.queue_pairs, options_.poll_us};
  const unsigned offloads = tap_offloads(activation.features);
  const int vnet_hdr_size = static_cast<int>(spec::net_hdr_size(activation.features));
  // Removed and created again while the device was reset (no supervisor
  // then to notice): attach now, or the fds would stay dead. Gone for good:
  // the supervisor attaches when the name returns.
  if (!tap_.attached(0) && ::if_nametoindex(tap_.name().c_str()) != 0) {
    try {
      reattach_tap(tap_, vnet_hdr_size, offloads, counters_);
    } catch (const std::exception& e) {
      if (const uint64_t n = repeats_.next())  // at every DRIVER_OK while it fails
        KVMMIO_LOG_WARN("net %s: cannot attach to the interface of that name: %s (#%llu)",
                        tap_.name().c_str(), e.what(), static_cast<unsigned long long>(n));
    }
  }
  try {
    tap_.set_vnet_hdr_size(vnet_hdr_size);
    tap_.set_offload(offloads);
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
      ctrl_ = std::make_unique<ControlQueue>(memory_, loop_, *activation.lock, options_.queue_pairs, counters_);
      ctrl_->bind(ctrl_ring, interrupt_);
    } catch (const std::exception& e) {
      if (const uint64_t n = repeats_.next())
        KVMMIO_LOG_ERROR("net %s: cannot start the control queue: %s (#%llu)", options_.tap.c_str(),
                         e.what(), static_cast<unsigned long long>(n));
      backend_.reset();
      return false;
    }
  }
  ++counters_.activations;
  try {
    link_up_ = tap_.link_up();
  } catch (const std::exception&) {
    link_up_ = false;  // the interface is gone
  }
  if (tap_.is_socketpair()) return true;  // no interface to watch
  try {
    supervisor_ = std::make_unique<TapSupervisor>(
        loop_, *activation.lock, tap_, counters_, options_.queue_pairs, vnet_hdr_size, offloads,
        TapSupervisor::Hooks{.guest_link = [this](bool up) { set_guest_link(up); },
                             .restored = [this](bool reattached) {
                               if (backend_) backend_->tap_restored(reattached);
                             }});
  } catch (const std::exception& e) {
    if (const uint64_t n = repeats_.next())
      KVMMIO_LOG_WARN("net %s: cannot watch the tap's link (%s): its faults will only show as "
                      "tap_errors (#%llu)", tap_.name().c_str(), e.what(), static_cast<unsigned long long>(n));
  }
  return true;
}

void VirtioNet::queue_notify(uint32_t queue) {
  if (has_ctrl_queue() && queue == ctrl_queue_index()) {
    if (ctrl_) ctrl_->process();
    return;
  }
  if (backend_) backend_->queue_notify(queue);
}

void VirtioNet::reset_queue(uint32_t queue) {
  if (backend_) backend_->reset_queue(queue);
}

void VirtioNet::enable_queue(const virtio::ActiveQueue& queue) {
  if (has_ctrl_queue() && queue.index == ctrl_queue_index()) {
    // The transport's ring object: the same pointer, configured afresh.
    if (ctrl_) ctrl_->bind(queue.ring, interrupt_);
    return;
  }
  if (backend_) backend_->enable_queue(queue);
}

void VirtioNet::reset() {
  ctrl_.reset();
  supervisor_.reset();
  backend_.reset();
  interrupt_ = nullptr;
}

// The link the guest sees (5.1.4), as the tap supervisor reports it.
void VirtioNet::set_guest_link(bool up) {
  if (link_up_.exchange(up) == up) return;
  ++(up ? counters_.tap_up : counters_.tap_down);
  if (interrupt_) interrupt_->signal_config_change();
}

}  // namespace kvmmio::net
