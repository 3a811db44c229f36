// SPDX-License-Identifier: BSD-2-Clause
// RegisterFile, modern layout only (Version 2, virtio 1.2 4.2.2): queue
// addresses as 64-bit register pairs, QueueReady, shared memory (none),
// QueueReset (VIRTIO_F_RING_RESET) and ConfigGeneration.
#include "mmio_device_state.h"
#include "mmio_queues.h"
#include "mmio_register_file.h"

namespace kvmmio::virtio {

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
    case reg::kConfigGeneration: return state_.read_register(info);
    default: return 0;  // the table admits no other readable register
  }
}

void RegisterFile::write_modern(const RegisterInfo& info, uint32_t value) {
  if (info.offset == reg::kShmSel) return;  // selects nothing: there are no regions
  const QueueState* q = queues_.selected();
  if (!q) return ctx_.guest_error("%s for queue %u, which does not exist", info.name, queues_.selected_index());

  if (info.offset == reg::kQueueReady) {
    if (value > 1) return ctx_.guest_error("QueueReady = %u: only 0 and 1 are defined", value);
    if (value == 0) return queues_.stop_selected();
    if (q->ready) return;
    const QueueLayout layout = queues_.modern_layout();
    if (const LayoutError e = validate_layout(ctx_.env.memory, layout, q->max_size); e != LayoutError::kNone) {
      ctx_.guest_error("queue %u cannot go live: %s", q->index, to_string(e));
      return state_.needs_reset("invalid queue set-up");
    }
    return queues_.go_live(layout);
  }

  if (info.offset == reg::kQueueReset) {
    if (!state_.accepted(feature::kRingReset) || !(state_.status() & status::kFeaturesOk))
      return ctx_.guest_error("QueueReset without VIRTIO_F_RING_RESET negotiated");
    if (value != 1) return;  // only writing 1 means anything
    // 2.6.1: the queue stops and its registers return to their reset values.
    return queues_.stop_selected(/*reset_registers=*/true);
  }

  // The address registers: not while the queue is live (4.2.2.2).
  bool taken = true;
  switch (info.offset) {
    case reg::kQueueDescLow: taken = queues_.set_address(QueueAddress::kDesc, false, value); break;
    case reg::kQueueDescHigh: taken = queues_.set_address(QueueAddress::kDesc, true, value); break;
    case reg::kQueueDriverLow: taken = queues_.set_address(QueueAddress::kDriver, false, value); break;
    case reg::kQueueDriverHigh: taken = queues_.set_address(QueueAddress::kDriver, true, value); break;
    case reg::kQueueDeviceLow: taken = queues_.set_address(QueueAddress::kDevice, false, value); break;
    case reg::kQueueDeviceHigh: taken = queues_.set_address(QueueAddress::kDevice, true, value); break;
    default: break;
  }
  if (!taken) refused_queue_write(info);
}

}  // namespace kvmmio::virtio
