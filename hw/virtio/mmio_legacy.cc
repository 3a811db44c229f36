// SPDX-License-Identifier: BSD-2-Clause
// RegisterFile, legacy layout only (Version 1, virtio 1.2 4.2.4): the
// page-based queue set-up with GuestPageSize, QueueAlign and QueuePFN.
#include <bit>

#include "mmio_device_state.h"
#include "mmio_queues.h"
#include "mmio_register_file.h"

namespace kvmmio::virtio {

uint32_t RegisterFile::read_legacy(const RegisterInfo& info) {
  if (info.offset != reg::kQueuePfn) return 0;  // the only readable legacy-only register
  const QueueState* q = queues_.selected();
  // Non-zero means "in use" (4.2.4 QueuePFN).
  return q && q->ready ? q->pfn : 0;
}

void RegisterFile::write_legacy(const RegisterInfo& info, uint32_t value) {
  if (info.offset == reg::kGuestPageSize) {
    if (!std::has_single_bit(value)) return ctx_.guest_error("GuestPageSize %u is not a power of two", value);
    return queues_.set_guest_page_size(value);
  }
  const QueueState* q = queues_.selected();
  if (!q) return ctx_.guest_error("%s for queue %u, which does not exist", info.name, queues_.selected_index());

  if (info.offset == reg::kQueueAlign) {
    // A live queue refuses every value (as QueuePFN below); an idle one
    // takes powers of two only.
    if (q->ready) return refused_queue_write(info);
    if (!std::has_single_bit(value)) return ctx_.guest_error("QueueAlign %u is not a power of two", value);
    queues_.set_align(value);  // idle, so it cannot refuse
    return;
  }

  // QueuePFN: 0 stops the queue, anything else places it (2.7.2 layout).
  if (value == 0) return queues_.stop_selected();
  if (q->ready) return refused_queue_write(info);
  const std::optional<QueueLayout> layout = legacy_layout(value, queues_.guest_page_size(), q->align, q->num);
  const LayoutError e = layout ? validate_layout(ctx_.env.memory, *layout, q->max_size) : LayoutError::kNone;
  if (!layout || e != LayoutError::kNone) {
    ctx_.guest_error("queue %u cannot go live at PFN 0x%x: %s", q->index, value,
                     layout ? to_string(e) : "bad page size or alignment");
    return state_.needs_reset("invalid queue set-up");
  }
  queues_.go_live(*layout, value);
}

}  // namespace kvmmio::virtio
