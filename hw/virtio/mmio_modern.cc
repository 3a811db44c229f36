// SPDX-License-Identifier: BSD-2-Clause
// RegisterFile, modern layout only (Version 2, virtio 1.2 4.2.2): queue
// addresses as 64-bit register pairs, QueueReady, shared memory (none),
// QueueReset (VIRTIO_F_RING_RESET) and ConfigGeneration.
#include "mmio_config.h"
#include "mmio_features.h"
#include "mmio_lifecycle.h"
#include "mmio_queues.h"
#include "mmio_register_file.h"

namespace kvmmio::virtio {
namespace {

void set_low(uint64_t& address, uint32_t value) { address = (address & ~uint64_t{0xffffffff}) | value; }
void set_high(uint64_t& address, uint32_t value) {
  address = (address & uint64_t{0xffffffff}) | (uint64_t{value} << 32);
}

}  // namespace

uint32_t RegisterFile::read_modern(const RegisterInfo& info) {
  const QueueState* q = queues_.selected();
  switch (info.offset) {
    case reg::kQueueReady: return q && q->ready ? 1 : 0;
    // No shared memory regions: every SHMSel reads as "does not exist".
    case reg::kShmLenLow:
    case reg::kShmLenHigh:
    case reg::kShmBaseLow:
    case reg::kShmBaseHigh: return kNoShmRegion;
    // Queue resets complete before the write returns, so a reset is never
    // seen in progress (4.2.2: 0 once the reset has completed).
    case reg::kQueueReset: return 0;
    case reg::kConfigGeneration: return config_.generation();
    default: return 0;  // the table admits no other readable register
  }
}

void RegisterFile::write_modern(const RegisterInfo& info, uint32_t value) {
  if (info.offset == reg::kShmSel) return;  // selects nothing: there are no regions
  QueueState* q = queues_.selected();
  if (!q) return ctx_.guest_error("%s for queue %u, which does not exist", info.name, queues_.selected_index());

  if (info.offset == reg::kQueueReady) {
    if (value > 1) return ctx_.guest_error("QueueReady = %u: only 0 and 1 are defined", value);
    if (value == 0) {
      if (q->ready) queues_.stop(*q);
      return;
    }
    if (q->ready) return;
    const QueueLayout layout{q->num, q->desc, q->driver, q->device};
    if (const LayoutError e = validate_layout(ctx_.env.memory, layout, q->max_size); e != LayoutError::kNone) {
      ctx_.guest_error("queue %u cannot go live: %s", q->index, to_string(e));
      return lifecycle_.needs_reset("invalid queue set-up");
    }
    return queues_.go_live(*q, layout);
  }

  if (info.offset == reg::kQueueReset) {
    if (!features_.accepted(feature::kRingReset) || !(lifecycle_.status() & status::kFeaturesOk))
      return ctx_.guest_error("QueueReset without VIRTIO_F_RING_RESET negotiated");
    if (value != 1) return;  // only writing 1 means anything
    // 2.6.1: the queue stops and its registers return to their reset values.
    if (q->ready) queues_.stop(*q);
    q->reset_registers();
    return;
  }

  // The address registers: not while the queue is live (4.2.2.2).
  if (q->ready) return ctx_.guest_error("%s written while queue %u is live", info.name, q->index);
  switch (info.offset) {
    case reg::kQueueDescLow: return set_low(q->desc, value);
    case reg::kQueueDescHigh: return set_high(q->desc, value);
    case reg::kQueueDriverLow: return set_low(q->driver, value);
    case reg::kQueueDriverHigh: return set_high(q->driver, value);
    case reg::kQueueDeviceLow: return set_low(q->device, value);
    case reg::kQueueDeviceHigh: return set_high(q->device, value);
    default: return;
  }
}

}  // namespace kvmmio::virtio
