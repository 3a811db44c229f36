// SPDX-License-Identifier: BSD-2-Clause
// The counter tables of docs/usage.md (see the header).
#include "vmm/cli/counter_docs.h"

#include <span>
#include <stdexcept>

#include "vmm/console/console_relay.h"
#include "kvmmio/gpio/pl061.h"
#include "kvmmio/rtc/pl031.h"
#include "vmm/control/control_server.h"
#include "vmm/stats/device_stats.h"
#include "kvmmio/rng/virtio_rng.h"
#include "kvmmio/vsock/virtio_vsock.h"
#include "kvmmio/fs/virtio_fs.h"
#include "kvmmio/net/vhost_user_net.h"

namespace kvmmio::vmm {
namespace {

void rows(std::string& out, const char* where, std::span<const CounterInfo> table) {
  for (const CounterInfo& c : table) out += std::string("| ") + where + " | `" + c.name + "` | " + c.meaning + " |\n";
}

// A two-column table: its header, then a row per key.
void key_table(std::string& out, const char* header, std::span<const CounterInfo> table) {
  out += std::string("\n| ") + header + " | meaning |\n| --- | --- |\n";
  for (const CounterInfo& c : table) out += std::string("| `") + c.name + "` | " + c.meaning + " |\n";
}

}  // namespace

std::string counter_tables_markdown() {
  std::string out = "| device `type` | `counters` key | meaning |\n| --- | --- | --- |\n";
  rows(out, "pl011", console::Pl011::Counters::kInfo);
  rows(out, "pl061", gpio::Pl061::Counters::kInfo);
  rows(out, "pl031", rtc::Pl031::Counters::kInfo);
  // In the order a slot's --stats has them (device_stats.h).
  rows(out, "virtio-*", virtio::TransportCounters::kInfo);
  rows(out, "virtio-*", SlotKernelCounters::kInfo);
  rows(out, "virtio-*", SlotSettings::kInfo);
  rows(out, "virtio-net", net::NetSettings::kInfo);
  rows(out, "virtio-net", net::NetCounters::kInfo);
  rows(out, "virtio-console", console::ConsoleCounters::kInfo);
  rows(out, "virtio-blk", block::BlockSettings::kInfo);
  rows(out, "virtio-blk", block::BlockCounters::kInfo);
  rows(out, "virtio-rng", rng::RngSettings::kInfo);
  rows(out, "virtio-rng", rng::RngCounters::kInfo);
  rows(out, "virtio-vsock", vsock::VsockSettings::kInfo);
  rows(out, "virtio-vsock", vsock::VsockCounters::kInfo);
  rows(out, "virtio-fs", fs::FsSettings::kInfo);
  rows(out, "virtio-fs", vhost::VhostUserCounters::kInfo);
  rows(out, "virtio-fs", vhost::VhostUserDeviceCounters::kInfo);
  rows(out, "vhost-user-net", net::VhostUserNetSettings::kInfo);
  rows(out, "vhost-user-net", vhost::VhostUserCounters::kInfo);
  rows(out, "vhost-user-net", vhost::VhostUserDeviceCounters::kInfo);
  key_table(out, "`console.counters` key (`pty`, `socket`)", ConsoleRelayCounters::kInfo);
  key_table(out, "`api.counters` key (`--api-socket`)", ControlCounters::kInfo);
  key_table(out, "`vcpus[].exits` key", VcpuExitCounts::kInfo);
  return out;
}

std::string with_counter_tables(const std::string& doc) {
  const size_t begin = doc.find(kCountersBegin);
  const size_t end = doc.find(kCountersEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    throw std::runtime_error(std::string("no ") + kCountersBegin + " ... " + kCountersEnd + " lines");
  const size_t body = doc.find('\n', begin) + 1;
  return doc.substr(0, body) + counter_tables_markdown() + doc.substr(end);
}

}  // namespace kvmmio::vmm
