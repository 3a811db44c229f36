// SPDX-License-Identifier: BSD-2-Clause
// VirtioNet: the virtio-net device (virtio 1.2 section 5.1) over a tap,
// with its queues moved by one of two backends:
//  - vhost-net (the kernel): the VMM hands each RX/TX pair to a /dev/vhost-net
//    instance with the queue's ioeventfd as kick fd and the device's irqfd as
//    call, and is out of the data path;
//  - userspace: the event-loop thread moves packets between rings and the
//    tap, woken by the queue ioeventfds and tap readiness.
// The control queue (MQ) is always the VMM's (hw/net/control_queue.h); a
// tap supervisor (hw/net/tap_supervisor.h) turns tap faults into the
// guest's link state.
//
// Queues: RX0, TX0, RX1, TX1, ..., then the control queue when MQ is offered.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::net {

// What the device and its backend did; read by the VMM's stats output.
#define KVMMIO_NET_COUNTERS(C)                                                                    \
  C(tx_packets, "frames from the guest written to the tap (userspace backend only)")             \
  C(tx_bytes, "their bytes, without the virtio-net header (userspace backend only)")              \
  C(rx_packets, "frames from the tap placed in guest buffers (userspace backend only)")          \
  C(rx_bytes, "their bytes, without the virtio-net header (userspace backend only)")              \
  C(rx_dropped, "frames from the tap that fit no guest buffer")                                   \
  C(rx_stalls, "times receive paused because the guest had posted no buffers")                    \
  C(tap_errors, "tap reads and writes that failed (link down, interface removed)")                \
  C(tap_down, "the guest's link went down with the tap's (down or removed)")                      \
  C(tap_up, "the guest's link came back with the tap's")                                          \
  C(tap_removed, "the tap interface was deleted under the VMM")                                   \
  C(tap_reattached, "an interface of the tap's name appeared and was attached")                  \
  C(vhost_errors, "vring errors vhost-net signalled (its ERR eventfd)")                           \
  C(ctrl_commands, "control-queue commands")                                                      \
  C(budget_yields, "times TX, RX or the control queue stopped at its work budget per dispatch "   \
                   "and left the rest to a later turn of the event loop")                         \
  C(activations, "DRIVER_OK count (driver resets + 1)")
struct KVMMIO_EXPORT NetCounters {
  KVMMIO_NET_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_NET_COUNTERS)
};

// What a virtio-net device reports before its counters.
#define KVMMIO_NET_SETTINGS(C)                                                 \
  C(vhost, "1: vhost-net moves the packets; 0: the userspace backend")        \
  C(poll_us, "vhost-net's busy polling per vring, in microseconds (poll_us=; 0: off, and always 0 on the userspace backend)")
struct KVMMIO_EXPORT NetSettings {
  KVMMIO_NET_SETTINGS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_NET_SETTINGS)
};

class NetBackend;
class ControlQueue;
class TapSupervisor;

class KVMMIO_EXPORT VirtioNet final : public virtio::VirtioDevice {
 public:
  static constexpr uint16_t kQueueSize = 256;
  // Work budgets: what one dispatch (a notify, the tap becoming readable, a
  // resumption) does at most before it yields to the rest of the event loop
  // and re-queues itself (DeferredWork; docs/security.md).
  static constexpr unsigned kTxChainsPerDispatch = 64;
  static constexpr uint64_t kTxBytesPerDispatch = 256 * 1024;
  static constexpr unsigned kRxFramesPerDispatch = 64;
  static constexpr unsigned kCtrlCommandsPerDispatch = 64;

  // Opens the tap (created if absent) and resolves vhost=auto: vhost-net
  // when /dev/vhost-net opens, else userspace with one warning. vhost=on
  // without /dev/vhost-net is a UserError naming the module. The default
  // MAC is default_mac(options.tap).
  VirtioNet(const NetOptions& options, const GuestMemory& memory, EventLoop& loop);
  // The same over `tap`, e.g. Tap::socketpair() (tests, the fuzzer): with
  // that stand-in, vhost=auto means the userspace backend and vhost=on is a
  // UserError, since vhost-net needs a real tap.
  VirtioNet(const NetOptions& options, const GuestMemory& memory, EventLoop& loop, Tap tap);
  ~VirtioNet() override;

  bool uses_vhost() const { return use_vhost_; }
  const NetOptions& options() const { return options_; }
  const NetCounters& counters() const { return counters_; }
  // Guest errors the device and its backend found (the transport counts its own).
  uint64_t guest_errors() const override { return errors_.count(); }
  // NetSettings, then NetCounters.
  void visit_counters(const virtio::CounterVisitor& visit) const override;
  Tap& tap() { return tap_; }

  // VirtioDevice
  uint32_t device_id() const override { return 1; }
  uint64_t device_features() const override;
  uint32_t num_queues() const override;
  uint16_t queue_max_size(uint32_t) const override { return kQueueSize; }
  uint32_t config_size() const override;
  void read_config(uint32_t offset, std::span<uint8_t> data) override;
  bool accept_features(uint64_t features) override;
  bool backend_owns_queue(uint32_t queue) const override;
  bool activate(const virtio::DeviceActivation& activation) override;
  void queue_notify(uint32_t queue) override;
  void reset() override;
  // A queue stopped and restarted while DRIVER_OK: the backend lets go of
  // its ring (vhost stops that vring) and takes the new one.
  void reset_queue(uint32_t queue) override;
  void enable_queue(const virtio::ActiveQueue& queue) override;

 private:
  uint32_t ctrl_queue_index() const { return 2u * options_.queue_pairs; }
  bool has_ctrl_queue() const { return options_.queue_pairs > 1; }
  // The tap supervisor's verdict (loop thread, device lock held).
  void set_guest_link(bool up);

  NetOptions options_;
  std::array<uint8_t, 6> mac_;
  const GuestMemory& memory_;
  EventLoop& loop_;
  Tap tap_;
  bool use_vhost_ = false;
  NetCounters counters_;
  std::string log_name_;  // "net TAP": names the device in guest-error messages
  GuestErrorLog errors_{log_name_.c_str()};
  LogLimit repeats_;  // host-side messages a guest's resets can make repeat

  // The link the guest sees in the config space's status (5.1.4): the tap's.
  std::atomic<bool> link_up_{true};

  // Between activate() and reset():
  std::unique_ptr<NetBackend> backend_;
  std::unique_ptr<ControlQueue> ctrl_;
  virtio::VirtioInterrupt* interrupt_ = nullptr;
  std::unique_ptr<TapSupervisor> supervisor_;  // last: its callbacks use the above
};

}  // namespace kvmmio::net
