// SPDX-License-Identifier: BSD-2-Clause
// The host page sizes the memory map serves (4, 16, 64 KiB) and the clear
// refusal of any other, whatever this test host's own page size is.
#include "vmm/boot/host_page.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include "kvmmio/base/error.h"
#include "vmm/boot/memory_map_arm64.h"

namespace kvmmio::vmm {
namespace {

TEST(HostPage, ArmPageSizesFitTheLayout) {
  for (uint64_t kib : {4, 16, 64}) {
    const uint64_t page = kib * 1024;
    EXPECT_NO_THROW(check_host_page(page)) << kib << " KiB";
    // What the check stands for: every slot base and the RAM layout are
    // whole host pages, and a mirror page stays inside its own slot.
    EXPECT_EQ(layout::virtio_mmio_slot(1).base % page, 0u);
    EXPECT_LE(layout::virtio_mmio_slot(0).base + page, layout::virtio_mmio_slot(1).base);
    EXPECT_EQ(layout::kRamBase % page, 0u);
    EXPECT_EQ(layout::kRamAlign % page, 0u);
  }
}

TEST(HostPage, LargerThanTheSlotStrideIsRefusedNamingTheLimit) {
  try {
    check_host_page(128 * 1024);
    FAIL() << "128 KiB pages accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("128 KiB"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("larger than the 64 KiB"), std::string::npos) << e.what();
  }
}

TEST(HostPage, NotAPowerOfTwoIsRefused) {
  EXPECT_THROW(check_host_page(0), UserError);
  EXPECT_THROW(check_host_page(12 * 1024), UserError);
}

TEST(HostPage, ReportsThisHostsPageSize) {
  EXPECT_EQ(host_page_size(), static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_NO_THROW(check_host_page(host_page_size()));
}

}  // namespace
}  // namespace kvmmio::vmm
