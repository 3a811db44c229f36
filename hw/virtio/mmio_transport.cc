// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport, common part: construction, the access rules (widths,
// directions, layouts: virtio 1.2 4.2.2.2), the registers both layouts
// share, and the configuration window at 0x100.
#include "kvmmio/virtio/mmio_transport.h"

#include <bit>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "queue_state.h"

namespace kvmmio::virtio {
namespace {

// More queues than any device needs (virtio-net with 512 queue pairs).
constexpr uint32_t kMaxQueues = 1025;

// Transport bits the transport decides on, whatever the device says: ring
// features it implements or not, VERSION_1 by layout, PCI-only bits.
constexpr uint64_t kTransportOwnedFeatures =
    feature::bit(feature::kRingIndirectDesc) | feature::bit(feature::kRingEventIdx) |
    feature::bit(feature::kVersion1) | feature::bit(feature::kRingPacked) |
    feature::bit(feature::kSrIov) | feature::bit(feature::kNotificationData) |
    feature::bit(feature::kNotifConfigData) | feature::bit(feature::kRingReset);

NotifyMode effective_notify_mode(const TransportOptions& options, const TransportEnv& env) {
  if (options.notify == NotifyMode::kTrap) return NotifyMode::kTrap;
  if (env.notify_fds && env.loop) return NotifyMode::kIoEventFd;
  KVMMIO_LOG_WARN("%s: no ioeventfd support wired in; queue notifications trap (notify=trap)",
                  env.name.c_str());
  return NotifyMode::kTrap;
}

}  // namespace

MmioTransport::MmioTransport(VirtioDevice& device, TransportEnv env, TransportOptions options)
    : device_(device),
      env_(std::move(env)),
      options_(options),
      notify_mode_(effective_notify_mode(options_, env_)),
      log_name_(env_.name),
      errors_(log_name_.c_str()),
      guest_page_size_(kLegacyDefaultPageSize) {
  if (options_.version != kVersionLegacy && options_.version != kVersionModern)
    throw std::invalid_argument(log_name_ + ": virtio-mmio version must be 1 or 2");
  if (options_.irq == IrqMode::kRelay && !env_.loop)
    throw std::invalid_argument(log_name_ + ": irq=relay needs an event loop");
  const uint32_t n = device_.num_queues();
  if (n > kMaxQueues) throw std::invalid_argument(log_name_ + ": too many queues");
  if (device_.config_size() > kConfigSpaceMax)
    throw std::invalid_argument(log_name_ + ": configuration space larger than 256 bytes");
  queues_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint16_t max = device_.queue_max_size(i);
    if (max == 0 || !std::has_single_bit(max) || max > kMaxQueueSize)
      throw std::invalid_argument(log_name_ + ": queue sizes must be powers of two <= 32768");
    queues_.emplace_back(env_.memory, i, max, device_.backend_owns_queue(i),
                         static_cast<QueueFaultSink*>(this));
  }
  if (options_.irq == IrqMode::kRelay) start_relay();
  if (options_.regs == RegsMode::kMirror) {
    mirror_ = std::make_unique<RegisterMirror>(kMmioWindowSize, env_.mirror_clean ? env_.mirror_clean
                                                                                 : clean_dcache_to_poc);
    auto guard = lock_.lock();
    refresh_mirror();
  }
}

MmioTransport::~MmioTransport() {
  {
    auto guard = lock_.lock();
    // The device drops the notify and interrupt fds before they close.
    if (active_) device_.reset();
    active_ = false;
    for (uint32_t i = 0; i < queues_.size(); ++i) detach_notify_fd(i);
  }
  relay_watch_ = {};
}

uint64_t MmioTransport::driver_features() const {
  auto guard = lock_.lock();
  return driver_features_;
}

int MmioTransport::interrupt_fd() const { return relay_ ? relay_->fd() : env_.irq.fd(); }

void MmioTransport::guest_error(const char* fmt, ...) {
  counters_.guest_errors.fetch_add(1, std::memory_order_relaxed);
  char message[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(message, sizeof(message), fmt, ap);
  va_end(ap);
  errors_.report("%s", message);
}

MmioTransport::QueueState* MmioTransport::selected_queue() {
  return queue_sel_ < queues_.size() ? &queues_[queue_sel_] : nullptr;
}

uint64_t MmioTransport::offered_features() const {
  uint64_t features = device_.device_features() & ~kTransportOwnedFeatures;
  features |= feature::bit(feature::kRingIndirectDesc) | feature::bit(feature::kRingEventIdx);
  if (options_.version == kVersionLegacy) return features & 0xffffffff;  // 32 feature bits
  features |= feature::bit(feature::kVersion1);
  if (device_.supports_queue_reset()) features |= feature::bit(feature::kRingReset);
  return features;
}

// The register a driver access reaches, or nullptr after reporting why the
// access is refused: registers take aligned 32-bit accesses, of the
// layout's registers only, in their direction (4.2.2.2).
const RegisterInfo* MmioTransport::register_for(uint64_t offset, size_t size, bool write) {
  const char* verb = write ? "write" : "read";
  if (size != sizeof(uint32_t) || offset % sizeof(uint32_t)) {
    guest_error("%zu-byte %s at 0x%03" PRIx64 ": registers take aligned 32-bit accesses", size, verb,
                offset);
    return nullptr;
  }
  const RegisterInfo* info = find_register(static_cast<uint32_t>(offset), options_.version);
  if (!info) {
    guest_error("%s at 0x%03" PRIx64 ": no register there in the version %u layout", verb, offset,
                options_.version);
    return nullptr;
  }
  if (!write && info->access == RegAccess::kWrite) {
    guest_error("read of write-only %s", info->name);
    return nullptr;
  }
  if (write && info->access == RegAccess::kRead) {
    guest_error("write to read-only %s", info->name);
    return nullptr;
  }
  return info;
}

void MmioTransport::mmio_read(uint64_t offset, std::span<uint8_t> data) {
  std::fill(data.begin(), data.end(), 0);  // whatever is refused reads as zeros
  counters_.register_reads.fetch_add(1, std::memory_order_relaxed);
  auto guard = lock_.lock();
  if (offset >= reg::kConfig) return read_config(offset - reg::kConfig, data);
  const RegisterInfo* info = register_for(offset, data.size(), /*write=*/false);
  if (!info) return;
  const uint32_t value = read_register(*info);
  std::memcpy(data.data(), &value, sizeof(value));
}

void MmioTransport::mmio_write(uint64_t offset, std::span<const uint8_t> data) {
  auto guard = lock_.lock();
  write_locked(offset, data);
  // Before the vCPU resumes: whatever this write changed reads back from
  // the mirror as it would have from the registers. A notify changes no
  // register (what it may cause, DEVICE_NEEDS_RESET, publishes itself), and
  // it is the one hot path that can still exit (notify=trap).
  if (offset != reg::kQueueNotify) refresh_mirror();
}

void MmioTransport::write_locked(uint64_t offset, std::span<const uint8_t> data) {
  if (offset >= reg::kConfig) return write_config(offset - reg::kConfig, data);
  const RegisterInfo* info = register_for(offset, data.size(), /*write=*/true);
  if (!info) return;
  uint32_t value;
  std::memcpy(&value, data.data(), sizeof(value));
  write_register(*info, value);
}

uint32_t MmioTransport::read_register(const RegisterInfo& info) {
  switch (info.offset) {
    case reg::kMagicValue: return kMagic;
    case reg::kVersion: return options_.version;
    case reg::kDeviceId: return device_.device_id();
    case reg::kVendorId: return kVendorId;
    case reg::kDeviceFeatures:
      // Selector 0: bits 0-31, 1: bits 32-63; there are no others.
      return device_features_sel_ < 2 ? static_cast<uint32_t>(offered_features() >> (32 * device_features_sel_))
                                      : 0;
    case reg::kQueueNumMax: {
      const QueueState* q = selected_queue();
      return q ? q->max_size : 0;  // 0: "the queue is not available"
    }
    case reg::kInterruptStatus: return interrupt_status();
    case reg::kStatus: return status_.load();
    default:
      return options_.version == kVersionLegacy ? read_legacy(info) : read_modern(info);
  }
}

void MmioTransport::write_register(const RegisterInfo& info, uint32_t value) {
  switch (info.offset) {
    case reg::kDeviceFeaturesSel: device_features_sel_ = value; return;
    case reg::kDriverFeaturesSel: driver_features_sel_ = value; return;
    case reg::kDriverFeatures: {
      // Fixed once FEATURES_OK (modern) or DRIVER_OK (legacy) is set (3.1.1).
      if (status_ & (status::kFeaturesOk | status::kDriverOk))
        return guest_error("DriverFeatures written after feature negotiation ended");
      if (driver_features_sel_ >= 2 || (options_.version == kVersionLegacy && driver_features_sel_ == 1)) {
        if (value) guest_error("DriverFeatures word %u: no such feature bits", driver_features_sel_);
        return;
      }
      const unsigned shift = 32 * driver_features_sel_;
      driver_features_ = (driver_features_ & ~(uint64_t{0xffffffff} << shift)) | (uint64_t{value} << shift);
      return;
    }
    case reg::kQueueSel: queue_sel_ = value; return;
    case reg::kQueueNum: {
      QueueState* q = selected_queue();
      if (!q) return guest_error("QueueNum for queue %u, which does not exist", queue_sel_);
      if (q->ready) return guest_error("QueueNum written while queue %u is live", queue_sel_);
      q->num = value;  // checked when the queue goes live
      return;
    }
    case reg::kQueueNotify: return notify_trapped(value);
    case reg::kInterruptAck: return acknowledge(value);
    case reg::kStatus: return write_status(value);
    default:
      return options_.version == kVersionLegacy ? write_legacy(info, value) : write_modern(info, value);
  }
}

void MmioTransport::read_config(uint64_t offset, std::span<uint8_t> data) {
  const uint64_t len = data.size();
  // 8-, 16- and 32-bit naturally aligned accesses; 64-bit fields are read
  // as two 32-bit halves (4.2.2.2).
  if ((len != 1 && len != 2 && len != 4) || offset % len)
    return guest_error("%" PRIu64 "-byte config read at +0x%" PRIx64 ": not an aligned 8/16/32-bit access", len, offset);
  if (offset + len > device_.config_size())
    return guest_error("config read at +0x%" PRIx64 " beyond the %u-byte configuration space", offset,
                       device_.config_size());
  device_.read_config(static_cast<uint32_t>(offset), data);
}

void MmioTransport::write_config(uint64_t offset, std::span<const uint8_t> data) {
  const uint64_t len = data.size();
  if ((len != 1 && len != 2 && len != 4) || offset % len)
    return guest_error("%" PRIu64 "-byte config write at +0x%" PRIx64 ": not an aligned 8/16/32-bit access", len, offset);
  if (offset + len > device_.config_size())
    return guest_error("config write at +0x%" PRIx64 " beyond the %u-byte configuration space", offset,
                       device_.config_size());
  device_.write_config(static_cast<uint32_t>(offset), data);
  // The configuration may now read differently: a driver re-reading it
  // under ConfigGeneration must see the change (2.5.1).
  config_generation_.fetch_add(1);
}

}  // namespace kvmmio::virtio
