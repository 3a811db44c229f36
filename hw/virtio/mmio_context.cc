// SPDX-License-Identifier: BSD-2-Clause
// TransportContext: the checks of what the transport can present, made
// before any part is built, and the guest-error log every part reports to.
#include "mmio_context.h"

#include <cstdarg>
#include <cstdio>
#include <stdexcept>

namespace kvmmio::virtio {
namespace {

// More queues than any device needs (virtio-net with 512 queue pairs).
constexpr uint32_t kMaxQueues = 1025;

NotifyMode effective_notify_mode(const TransportOptions& options, const TransportEnv& env) {
  if (options.notify == NotifyMode::kTrap) return NotifyMode::kTrap;
  if (env.notify_fds && env.loop) return NotifyMode::kIoEventFd;
  KVMMIO_LOG_WARN("%s: no ioeventfd support wired in; queue notifications trap (notify=trap)",
                  env.name.c_str());
  return NotifyMode::kTrap;
}

// What the transport cannot present, before any part is built.
const TransportOptions& checked(const TransportOptions& options, const VirtioDevice& device,
                                const TransportEnv& env) {
  if (options.version != kVersionLegacy && options.version != kVersionModern)
    throw std::invalid_argument(env.name + ": virtio-mmio version must be 1 or 2");
  if (options.irq == IrqMode::kRelay && !env.loop)
    throw std::invalid_argument(env.name + ": irq=relay needs an event loop");
  if (device.num_queues() > kMaxQueues) throw std::invalid_argument(env.name + ": too many queues");
  if (device.config_size() > kConfigSpaceMax)
    throw std::invalid_argument(env.name + ": configuration space larger than 256 bytes");
  return options;
}

}  // namespace

TransportContext::TransportContext(VirtioDevice& dev, TransportEnv e, TransportOptions o)
    : device(dev),
      env(std::move(e)),
      options(checked(o, dev, env)),
      notify_mode(effective_notify_mode(options, env)) {}

void TransportContext::guest_error(const char* fmt, ...) {
  counters.guest_errors.fetch_add(1, std::memory_order_relaxed);
  char message[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(message, sizeof(message), fmt, ap);
  va_end(ap);
  errors.report("%s", message);
}

}  // namespace kvmmio::virtio
