// SPDX-License-Identifier: BSD-2-Clause
// docs/usage.md's counter table (vmm/cli/counter_docs.h) has a row for every
// key each device type's --stats counters carry, so no counter goes
// undocumented when a new table joins a device's stats but not the docs.
#include "vmm/cli/counter_docs.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/block/block_machine.h"
#include "tests/vmm/unwired_devices.h"
#include "kvmmio/rng/virtio_rng.h"
#include "kvmmio/vsock/virtio_vsock.h"
#include "kvmmio/fs/virtio_fs.h"
#include "kvmmio/vhost/vhost_user.h"
#include "tests/vhost/test_backend.h"
#include "vmm/stats/device_stats.h"

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

// The keys come from real devices through the one slot path the VMM uses
// (virtio_counters visits the device's own counters).
TEST(CounterDocs, EveryVirtioNetKeyHasARow) {
  const test::UnwiredDevices devices;
  const Counters c =
      virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true), devices.net);
  EXPECT_EQ(undocumented(c, "virtio-net"), "");
}

TEST(CounterDocs, EveryVirtioConsoleKeyHasARow) {
  const test::UnwiredDevices devices;
  const Counters c =
      virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true), devices.console);
  EXPECT_EQ(undocumented(c, "virtio-console"), "");
}

TEST(CounterDocs, EveryVirtioBlockKeyHasARow) {
  const block::test::TempDir dir;
  block::DiskOptions o;
  o.path = dir.image("disk.img", 4096);
  GuestMemory memory;
  EventLoop loop;
  const block::VirtioBlock disk(memory, loop, block::DiskImage::open(o));
  const Counters c = virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true), disk);
  EXPECT_EQ(undocumented(c, "virtio-blk"), "");
  EXPECT_GT(c.size(), 20u);  // the transport's, the slot's, then the disk's
}

TEST(CounterDocs, EveryVirtioRngKeyHasARow) {
  GuestMemory memory;
  EventLoop loop;
  const rng::VirtioRng device(memory, loop);
  const Counters c = virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true), device);
  EXPECT_EQ(undocumented(c, "virtio-rng"), "");
}

// Without its backend (no vhost-vsock here): the keys are the same.
TEST(CounterDocs, EveryVirtioVsockKeyHasARow) {
  GuestMemory memory;
  EventLoop loop;
  const vsock::VirtioVsock device(vsock::VsockOptions{.cid = 3}, memory, loop, 0);
  const Counters c = virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true), device);
  EXPECT_EQ(undocumented(c, "virtio-vsock"), "");
}

TEST(CounterDocs, EveryVirtioFsKeyHasARow) {
  GuestMemory memory;
  EventLoop loop;
  // A backend of the test's own that offers what the device needs.
  vhost::test::TestBackend backend([](vhost::test::TestBackend& b, vhost::test::Message& m) {
    if (m.request() == vhost::user::Request::kGetFeatures) b.reply_u64(m, (1ull << 32) | (1ull << 28));
    return true;
  });
  const fs::VirtioFs device(fs::FsOptions{"share", "s"}, vhost::VhostUserFrontend(backend.take_front(), "s"),
                            memory, loop);
  const Counters c = virtio_counters({}, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, true), device);
  EXPECT_EQ(undocumented(c, "virtio-fs"), "");
}

TEST(CounterDocs, EveryPl011KeyHasARow) { EXPECT_EQ(undocumented(pl011_counters({}), "pl011"), ""); }

}  // namespace
}  // namespace kvmmio::vmm
