// SPDX-License-Identifier: BSD-2-Clause
// RegisterFile, common part: the access rules (widths, directions, layouts:
// virtio 1.2 4.2.2.2), the registers both layouts share, and the way to the
// configuration window at 0x100.
#include "mmio_register_file.h"

#include <cinttypes>
#include <cstring>

#include "mmio_device_state.h"
#include "mmio_queues.h"

namespace kvmmio::virtio {

// The register a driver access reaches, or nullptr after reporting why the
// access is refused: registers take aligned 32-bit accesses, of the
// layout's registers only, in their direction (4.2.2.2).
const RegisterInfo* RegisterFile::register_for(uint64_t offset, size_t size, bool write) {
  const char* verb = write ? "write" : "read";
  if (size != sizeof(uint32_t) || offset % sizeof(uint32_t)) {
    ctx_.guest_error("%zu-byte %s at 0x%03" PRIx64 ": registers take aligned 32-bit accesses", size, verb,
                     offset);
    return nullptr;
  }
  const RegisterInfo* info = find_register(static_cast<uint32_t>(offset), ctx_.options.version);
  if (!info) {
    ctx_.guest_error("%s at 0x%03" PRIx64 ": no register there in the version %u layout", verb, offset,
                     ctx_.options.version);
    return nullptr;
  }
  if (!write && info->access == RegAccess::kWrite) {
    ctx_.guest_error("read of write-only %s", info->name);
    return nullptr;
  }
  if (write && info->access == RegAccess::kRead) {
    ctx_.guest_error("write to read-only %s", info->name);
    return nullptr;
  }
  return info;
}

void RegisterFile::read(uint64_t offset, std::span<uint8_t> data) {
  if (offset >= reg::kConfig) return state_.read_config(offset - reg::kConfig, data);
  const RegisterInfo* info = register_for(offset, data.size(), /*write=*/false);
  if (!info) return;
  const uint32_t value = read(*info);
  std::memcpy(data.data(), &value, sizeof(value));
}

void RegisterFile::write(uint64_t offset, std::span<const uint8_t> data) {
  if (offset >= reg::kConfig) return state_.write_config(offset - reg::kConfig, data);
  const RegisterInfo* info = register_for(offset, data.size(), /*write=*/true);
  if (!info) return;
  uint32_t value;
  std::memcpy(&value, data.data(), sizeof(value));
  write(*info, value);
}

void RegisterFile::refused_queue_write(const RegisterInfo& info) {
  const QueueState* q = queues_.selected();
  if (!q) return ctx_.guest_error("%s for queue %u, which does not exist", info.name, queues_.selected_index());
  ctx_.guest_error("%s written while queue %u is live", info.name, q->index);
}

uint32_t RegisterFile::read(const RegisterInfo& info) {
  switch (info.offset) {
    case reg::kMagicValue: return kMagic;
    case reg::kVersion: return ctx_.options.version;
    case reg::kDeviceId: return ctx_.device.device_id();
    case reg::kVendorId: return kVendorId;
    case reg::kDeviceFeatures:
    case reg::kInterruptStatus:
    case reg::kStatus: return state_.read_register(info);
    case reg::kQueueNumMax: {
      const QueueState* q = queues_.selected();
      return q ? q->max_size : 0;  // 0: "the queue is not available"
    }
    default:
      return ctx_.options.version == kVersionLegacy ? read_legacy(info) : read_modern(info);
  }
}

void RegisterFile::write(const RegisterInfo& info, uint32_t value) {
  switch (info.offset) {
    case reg::kDeviceFeaturesSel:
    case reg::kDriverFeaturesSel:
    case reg::kDriverFeatures:
    case reg::kInterruptAck:
    case reg::kStatus: return state_.write_register(info, value);
    case reg::kQueueSel: return queues_.select(value);
    case reg::kQueueNum:
      // Checked when the queue goes live.
      if (!queues_.set_size(value)) refused_queue_write(info);
      return;
    case reg::kQueueNotify: return queues_.notify_trapped(value);
    default:
      return ctx_.options.version == kVersionLegacy ? write_legacy(info, value) : write_modern(info, value);
  }
}

}  // namespace kvmmio::virtio
