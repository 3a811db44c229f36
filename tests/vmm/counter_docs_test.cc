// SPDX-License-Identifier: BSD-2-Clause
// docs/usage.md's counter table (vmm/counter_docs.h) has a row for every
// key each device type's --stats counters carry, so no counter goes
// undocumented when a new table joins a device's stats but not the docs.
#include "vmm/counter_docs.h"

#include <gtest/gtest.h>

#include <string>

#include "vmm/device_stats.h"

namespace kvmmio::vmm {
namespace {

// The keys of `c` that have no row for device type `type` (or virtio-*).
std::string undocumented(const Counters& c, const std::string& type) {
  const std::string table = counter_tables_markdown();
  std::string missing;
  for (const auto& [name, value] : c) {
    const std::string cell = " | `" + name + "` | ";
    if (table.find("| " + type + cell) == std::string::npos &&
        table.find("| virtio-*" + cell) == std::string::npos)
      missing += name + " ";
  }
  return missing;
}

TEST(CounterDocs, EveryVirtioNetKeyHasARow) {
  Counters c = virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true));
  add_net_counters(c, /*vhost=*/true, 0, {});
  EXPECT_EQ(undocumented(c, "virtio-net"), "");
}

TEST(CounterDocs, EveryVirtioConsoleKeyHasARow) {
  Counters c = virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true));
  add_console_counters(c, 0, {});
  EXPECT_EQ(undocumented(c, "virtio-console"), "");
}

TEST(CounterDocs, EveryPl011KeyHasARow) { EXPECT_EQ(undocumented(pl011_counters({}), "pl011"), ""); }

}  // namespace
}  // namespace kvmmio::vmm
