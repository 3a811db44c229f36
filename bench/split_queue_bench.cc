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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../tests/virtio/driver_ring.h"
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
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--json" && i + 1 < argc) json = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--seconds S] [--repeats N] [--json FILE]\n", argv[0]);
      return 2;
    }
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
  std::string out = "{\n  \"bench\": \"split_queue\",\n  \"queue_size\": " + std::to_string(kQueueSize) +
                    ",\n  \"repeats\": " + std::to_string(repeats) + ",\n  \"cases\": [\n";
  for (size_t i = 0; i < std::size(cases); ++i) {
    std::sort(runs[i].begin(), runs[i].end(),
              [](const Result& a, const Result& b) { return a.chains_per_second < b.chains_per_second; });
    const Result m = runs[i][runs[i].size() / 2];
    const std::string name = std::to_string(cases[i].chain_len) + "-desc, " +
                             (cases[i].event_idx ? "EVENT_IDX" : "no EVENT_IDX");
    std::printf("%-22s %14.0f %10.1f %18.4f\n", name.c_str(), m.chains_per_second, 1e9 / m.chains_per_second,
                m.notifications_per_chain);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "    {\"descriptors\": %u, \"event_idx\": %s, \"chains_per_second\": %.0f, "
                  "\"notifications_per_chain\": %.4f}%s\n",
                  cases[i].chain_len, cases[i].event_idx ? "true" : "false", m.chains_per_second,
                  m.notifications_per_chain, i + 1 < std::size(cases) ? "," : "");
    out += line;
  }
  out += "  ]\n}\n";
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f || std::fputs(out.c_str(), f) < 0 || std::fclose(f) != 0) {
      std::perror(json.c_str());
      return 1;
    }
  }
  return 0;
}
