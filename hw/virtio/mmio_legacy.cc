// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport, legacy layout only (Version 1, virtio 1.2 4.2.4): the
// page-based queue set-up with GuestPageSize, QueueAlign and QueuePFN.
#include <bit>

#include "kvmmio/virtio/mmio_transport.h"
#include "queue_state.h"

namespace kvmmio::virtio {

uint32_t MmioTransport::read_legacy(const RegisterInfo& info) {
  if (info.offset != reg::kQueuePfn) return 0;  // the only readable legacy-only register
  const QueueState* q = selected_queue();
  // Non-zero means "in use" (4.2.4 QueuePFN).
  return q && q->ready ? q->pfn : 0;
}

void MmioTransport::write_legacy(const RegisterInfo& info, uint32_t value) {
  if (info.offset == reg::kGuestPageSize) {
    if (!std::has_single_bit(value)) return guest_error("GuestPageSize %u is not a power of two", value);
    guest_page_size_ = value;
    return;
  }
  QueueState* q = selected_queue();
  if (!q) return guest_error("%s for queue %u, which does not exist", info.name, queue_sel_);
  const uint32_t index = queue_sel_;

  if (info.offset == reg::kQueueAlign) {
    if (q->ready) return guest_error("QueueAlign written while queue %u is live", index);
    if (!std::has_single_bit(value)) return guest_error("QueueAlign %u is not a power of two", value);
    q->align = value;
    return;
  }

  // QueuePFN: 0 stops the queue, anything else places it (2.7.2 layout).
  if (value == 0) {
    if (q->ready) stop_queue(index);
    q->pfn = 0;
    return;
  }
  if (q->ready) return guest_error("QueuePFN written while queue %u is live", index);
  const std::optional<QueueLayout> layout = legacy_layout(value, guest_page_size_, q->align, q->num);
  const LayoutError e = layout ? validate_layout(env_.memory, *layout, q->max_size) : LayoutError::kNone;
  if (!layout || e != LayoutError::kNone) {
    guest_error("queue %u cannot go live at PFN 0x%x: %s", index, value,
                layout ? to_string(e) : "bad page size or alignment");
    return needs_reset("invalid queue set-up");
  }
  q->pfn = value;
  set_queue_ready(index, *layout);
}

}  // namespace kvmmio::virtio
