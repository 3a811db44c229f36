// SPDX-License-Identifier: BSD-2-Clause
// IoEventFdSource: queue notify fds as KVM ioeventfds on QueueNotify.
#include "kvmmio/virtio/notify_fd_source.h"

namespace kvmmio::virtio {
namespace {

class QueueIoEventFd final : public QueueNotifyFd {
 public:
  explicit QueueIoEventFd(IoEventFd ioeventfd) : ioeventfd_(std::move(ioeventfd)) {}
  int fd() const override { return ioeventfd_.fd(); }

 private:
  IoEventFd ioeventfd_;  // deassigned from KVM, then closed, on destruction
};

}  // namespace

std::unique_ptr<QueueNotifyFd> IoEventFdSource::attach(uint64_t notify_gpa, uint32_t queue_index) {
  // QueueNotify is a 32-bit register and, without VIRTIO_F_NOTIFICATION_DATA,
  // the value written is the queue index (4.2.3.3): the type gives the length.
  return std::make_unique<QueueIoEventFd>(
      IoEventFd::mmio_datamatch<uint32_t>(vm_, notify_gpa, queue_index));
}

}  // namespace kvmmio::virtio
