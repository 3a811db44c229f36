// SPDX-License-Identifier: BSD-2-Clause
// ControlQueue: virtio-net's control queue commands (see the header).
#include "control_queue.h"

#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/descriptor_chain.h"

namespace kvmmio::net {

ControlQueue::ControlQueue(const GuestMemory& memory, EventLoop& loop, DeviceLock& lock, uint16_t queue_pairs,
                           NetCounters& counters)
    : memory_(memory),
      queue_pairs_(queue_pairs),
      counters_(counters),
      drain_([this] {
        ++counters_.budget_yields;
        resume_.schedule();
      }),
      resume_(loop, lock, [this] { process(); }) {}

void ControlQueue::process() {
  drain_.run({.chains = VirtioNet::kCtrlCommandsPerDispatch}, [this](const virtio::DescriptorChain& chain, uint64_t) {
    ++counters_.ctrl_commands;
    const uint8_t ack = execute(chain);
    // The ack is the first device-writable byte (everything before it is
    // driver-readable), and the used length is what was written: 1 byte,
    // or 0 for a chain with nothing writable (a driver bug, answered with
    // nothing rather than with a length that covers bytes never written).
    const size_t written = virtio::write_to_chain(memory_, chain, 0, {&ack, 1});
    return virtio::ChainStep::used(static_cast<uint32_t>(written));
  });
}

uint8_t ControlQueue::execute(const virtio::DescriptorChain& chain) const {
  spec::CtrlHdr hdr{};
  if (virtio::read_from_chain(memory_, chain, 0, {reinterpret_cast<uint8_t*>(&hdr), sizeof(hdr)}) != sizeof(hdr))
    return spec::kCtrlErr;
  if (hdr.cls == spec::kCtrlClassMq && hdr.cmd == spec::kCtrlMqVqPairsSet) {
    uint16_t pairs = 0;
    const bool read = virtio::read_from_chain(memory_, chain, sizeof(hdr),
                                              {reinterpret_cast<uint8_t*>(&pairs), sizeof(pairs)}) == sizeof(pairs);
    return read && pairs >= spec::kMqVqPairsMin && pairs <= queue_pairs_ ? spec::kCtrlOk : spec::kCtrlErr;
  }
  if (hdr.cls == spec::kCtrlClassRx || hdr.cls == spec::kCtrlClassMac) return spec::kCtrlOk;
  return spec::kCtrlErr;
}

}  // namespace kvmmio::net
