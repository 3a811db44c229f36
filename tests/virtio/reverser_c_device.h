// SPDX-License-Identifier: BSD-2-Clause
// Reverser: a device written as a C embedder writes one against
// kvmmio/kvmmio.h, for the C API's tests: its state behind `opaque`, its
// callbacks in a kvmmio_device_ops; it answers each request (a readable
// part, then a writable one) with the request's bytes reversed, and
// counts what the transport asked of it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kvmmio/kvmmio.h"

namespace kvmmio::virtio::test {

struct Reverser {
  static constexpr uint32_t kDeviceId = 42;
  static constexpr uint64_t kFeature = 1ull << 3;
  uint64_t features = ~uint64_t{0};
  int activations = 0, resets = 0, notifies = 0, interrupts = 0;
  bool refuse = false;  // activate() says no
  uint8_t config[8] = {1, 2, 3, 4, 5, 6, 7, 8};
};

// Serves every available request of `q`, then interrupts the driver if it
// wants that.
inline void reverse_requests(Reverser& r, kvmmio_queue* q) {
  while (kvmmio_chain* c = kvmmio_queue_pop(q)) {
    std::vector<uint8_t> in(kvmmio_chain_readable(c));
    EXPECT_EQ(kvmmio_chain_read(c, 0, in.data(), in.size()), in.size());
    std::reverse(in.begin(), in.end());
    const size_t n = kvmmio_chain_write(c, 0, in.data(), in.size());
    kvmmio_queue_push(q, c, static_cast<uint32_t>(n));
  }
  r.interrupts += kvmmio_queue_interrupt(q);
}

inline kvmmio_device_ops reverser_ops() {
  kvmmio_device_ops ops{};
  ops.name = "reverser";
  ops.device_id = Reverser::kDeviceId;
  ops.num_queues = 1;
  ops.queue_max_size = 64;
  ops.features = Reverser::kFeature;
  ops.config_size = 8;
  ops.read_config = [](void* o, uint32_t offset, void* data, uint32_t len) {
    std::memcpy(data, static_cast<Reverser*>(o)->config + offset, len);
  };
  ops.activate = [](void* o, uint64_t features) {
    auto* r = static_cast<Reverser*>(o);
    r->features = features;
    ++r->activations;
    return r->refuse ? -1 : 0;
  };
  ops.queue_notify = [](void* o, kvmmio_queue* q) {
    auto* r = static_cast<Reverser*>(o);
    ++r->notifies;
    EXPECT_EQ(kvmmio_queue_index(q), 0u);
    reverse_requests(*r, q);
  };
  ops.reset = [](void* o) { ++static_cast<Reverser*>(o)->resets; };
  return ops;
}

}  // namespace kvmmio::virtio::test
