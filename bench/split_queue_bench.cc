// SPDX-License-Identifier: BSD-2-Clause
// split_queue_bench: descriptor-chain processing throughput of SplitQueue,
// the device side of the split virtqueue: pop (with every validation) and
// push_used, plus the should_interrupt() decision after each chain.
//
// Cases: 1- and 3-descriptor chains, without and with VIRTIO_F_EVENT_IDX.
// The driver side is a minimal stand-in that republishes the same chains
// (the way a NAPI-style driver refills a ring in batches): it writes the
// avail ring through pointers and, with EVENT_IDX, re-arms used_event once
// per batch, so the figures are the device side's cost. Single-threaded:
// it measures the code, not cache-line ping-pong with a real guest.
//
//   make bench && ./bench/split_queue_bench [--seconds S] [--repeats N] [--json FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tests/virtio/driver_ring.h"
#include "kvmmio/base/error.h"
#include "vmm/process/parse.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/split_queue.h"

namespace {

using namespace kvmmio;
using namespace kvmmio::virtio;

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRing = kRam + 0x1000;
constexpr uint64_t kBuffers = kRam + 0x100000;
constexpr uint32_t kQueueSize = 256;

struct Case {
  uint32_t chain_len;
  bool event_idx;
};

struct Result {
  double chains_per_second;
  double notifications_per_chain;
};

// Avail/used ring fields the stand-in driver touches, as host pointers.
struct DriverView {
  uint16_t* avail_idx;
  uint16_t* avail_ring;
  uint16_t* used_event;
  const uint16_t* used_idx;
};

uint16_t* at16(const GuestMemory& memory, uint64_t gpa) {
  return reinterpret_cast<uint16_t*>(memory.span(gpa, 2)->data());
}

Result run_case(const GuestMemory& memory, Case c, double seconds) {
  const QueueLayout layout = test::DriverRing::linux_layout(kRing, kQueueSize);
  test::DriverRing driver(memory, layout);
  // Chains built once: chain k uses descriptors [k*len, k*len + len): a
  // readable header, then (for 3) a readable body and a writable tail.
  const uint32_t chains_in_ring = kQueueSize / c.chain_len;
  std::vector<uint16_t> heads;
  for (uint32_t k = 0; k < chains_in_ring; ++k) {
    const uint16_t first = static_cast<uint16_t>(k * c.chain_len);
    for (uint32_t j = 0; j < c.chain_len; ++j) {
      const bool last = j + 1 == c.chain_len;
      const uint16_t flags = (last && c.chain_len > 1 ? desc_flag::kWrite : 0) | (last ? 0 : desc_flag::kNext);
      driver.write_desc(first + j, kBuffers + 2048ull * (first + j), j == 1 ? 1500 : 64, flags,
                        static_cast<uint16_t>(first + j + 1));
    }
    heads.push_back(first);
  }
  const DriverView view{at16(memory, layout.avail + 2), at16(memory, layout.avail + 4),
                        at16(memory, layout.avail + 4 + 2 * kQueueSize), at16(memory, layout.used + 2)};

  SplitQueue queue(memory, 0);
  queue.configure(layout, {.event_idx = c.event_idx, .indirect = false});
  DescriptorChain chain;
  uint16_t avail = 0;
  uint64_t chains = 0, notifications = 0, batches = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  for (;;) {
    // Driver: expose every chain of the ring, then the index.
    for (uint16_t head : heads) view.avail_ring[avail++ % kQueueSize] = head;
    __atomic_store_n(view.avail_idx, avail, __ATOMIC_RELEASE);
    // Device: drain.
    while (queue.pop(chain) == SplitQueue::PopResult::kChain) {
      queue.push_used(chain.head, static_cast<uint32_t>(chain.writable_bytes));
      notifications += queue.should_interrupt();
      ++chains;
    }
    // Driver: take the used entries; with EVENT_IDX ask for the next one.
    if (c.event_idx) __atomic_store_n(view.used_event, *view.used_idx, __ATOMIC_RELAXED);
    if (++batches % 256 == 0 && std::chrono::steady_clock::now() > deadline) break;
  }
  if (queue.broken()) {
    std::fprintf(stderr, "split_queue_bench: the queue broke; the bench rings are wrong\n");
    std::exit(1);
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {chains / elapsed, static_cast<double>(notifications) / static_cast<double>(chains)};
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  int repeats = 3;
  std::string json;
  bool help = false;
  try {
    parse_cli({{"--seconds", "seconds per case, e.g. --seconds 1",
                [&seconds](const std::string& v) {
                  seconds = parse_positive_decimal(v, "--seconds " + v, 3600);
                }},
               {"--repeats", "a number of interleaved runs, e.g. --repeats 3",
                [&repeats](const std::string& v) {
                  repeats = static_cast<int>(parse_uint(v, "--repeats " + v, 1, 1000));
                }},
               {"--json", "an output file, e.g. --json split-queue.json",
                [&json](const std::string& v) { json = v; }},
               {"--help", "", [&help](const std::string&) { help = true; }}},
              std::vector<std::string>(argv + 1, argv + argc), 0);
  } catch (const UserError& e) {
    std::fprintf(stderr, "split_queue_bench: %s\n", e.what());
    return 2;
  }
  if (help) {
    std::printf("usage: split_queue_bench [--seconds S] [--repeats N] [--json FILE]\n");
    return 0;
  }
  GuestMemory memory;
  memory.add_ram(kRam, 4 << 20);

  const Case cases[] = {{1, false}, {1, true}, {3, false}, {3, true}};
  // Interleaved repeats, medians: drift hits every case alike.
  std::vector<std::vector<Result>> runs(std::size(cases));
  for (int r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < std::size(cases); ++i) runs[i].push_back(run_case(memory, cases[i], seconds));
  }
  std::printf("%-22s %14s %10s %18s\n", "case", "chains/s", "ns/chain", "notifies/chain");
  nlohmann::ordered_json doc = {{"bench", "split_queue"}, {"queue_size", kQueueSize},
                                 {"repeats", repeats}, {"cases", nlohmann::ordered_json::array()}};
  for (size_t i = 0; i < std::size(cases); ++i) {
    std::sort(runs[i].begin(), runs[i].end(),
              [](const Result& a, const Result& b) { return a.chains_per_second < b.chains_per_second; });
    const Result m = runs[i][runs[i].size() / 2];
    const std::string name = std::to_string(cases[i].chain_len) + "-desc, " +
                             (cases[i].event_idx ? "EVENT_IDX" : "no EVENT_IDX");
    std::printf("%-22s %14.0f %10.1f %18.4f\n", name.c_str(), m.chains_per_second, 1e9 / m.chains_per_second,
                m.notifications_per_chain);
    doc["cases"].push_back({{"descriptors", cases[i].chain_len},
                            {"event_idx", cases[i].event_idx},
                            {"chains_per_second", std::round(m.chains_per_second)},
                            {"notifications_per_chain", std::round(m.notifications_per_chain * 1e4) / 1e4}});
  }
  if (!json.empty()) {
    std::ofstream f(json);
    f << doc.dump(2) << "\n";
    f.close();
    if (!f) {
      std::fprintf(stderr, "split_queue_bench: --json %s: cannot write: %s\n", json.c_str(),
                   std::strerror(errno));
      return 2;
    }
  }
  return 0;
}
