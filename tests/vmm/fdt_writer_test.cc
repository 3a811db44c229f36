// SPDX-License-Identifier: BSD-2-Clause
// FdtWriter: what it writes reads back through libfdt; nodes end with their
// guards; the buffer grows; misuse is an FdtError naming what failed.
#include "vmm/boot/fdt_writer.h"

#include <gtest/gtest.h>
#include <libfdt.h>

#include <cstring>

namespace kvmmio::vmm {
namespace {

TEST(FdtWriter, WritesNodesAndPropertiesLibfdtReadsBack) {
  FdtWriter fdt;
  {
    auto root = fdt.begin_node("");
    fdt.property_string("model", "m");
    fdt.property_strings("compatible", {"a,b", "c"});
    fdt.property_u32("u32", 0x12345678);
    fdt.property_u64("u64", 0x1122334455667788ULL);
    fdt.property_cells("cells", {1, 2, 3});
    fdt.property_empty("flag");
    {
      auto child = fdt.begin_node("child@10");
      fdt.property_u32("phandle", 7);
    }
  }
  const std::vector<uint8_t> blob = fdt.finish();
  const void* f = blob.data();
  ASSERT_EQ(fdt_check_header(f), 0);
  EXPECT_EQ(fdt_totalsize(f), blob.size());

  int len = 0;
  EXPECT_STREQ(static_cast<const char*>(fdt_getprop(f, 0, "model", &len)), "m");
  const char* compat = static_cast<const char*>(fdt_getprop(f, 0, "compatible", &len));
  ASSERT_EQ(len, 6);
  EXPECT_EQ(std::memcmp(compat, "a,b\0c\0", 6), 0);
  EXPECT_EQ(fdt32_to_cpu(*static_cast<const fdt32_t*>(fdt_getprop(f, 0, "u32", &len))),
            0x12345678u);
  const auto* u64 = static_cast<const fdt32_t*>(fdt_getprop(f, 0, "u64", &len));
  ASSERT_EQ(len, 8);
  EXPECT_EQ(fdt32_to_cpu(u64[0]), 0x11223344u);
  EXPECT_EQ(fdt32_to_cpu(u64[1]), 0x55667788u);
  const auto* cells = static_cast<const fdt32_t*>(fdt_getprop(f, 0, "cells", &len));
  ASSERT_EQ(len, 12);
  EXPECT_EQ(fdt32_to_cpu(cells[2]), 3u);
  ASSERT_NE(fdt_getprop(f, 0, "flag", &len), nullptr);
  EXPECT_EQ(len, 0);
  const int child = fdt_path_offset(f, "/child@10");
  ASSERT_GE(child, 0);
  EXPECT_EQ(fdt_node_offset_by_phandle(f, 7), child);
}

TEST(FdtWriter, GrowsItsBufferAsNeeded) {
  FdtWriter fdt(1024);
  {
    auto root = fdt.begin_node("");
    for (int i = 0; i < 500; ++i) {
      auto n = fdt.begin_node("node" + std::to_string(i));
      fdt.property_string("text", std::string(100, 'a' + i % 26));
    }
  }
  const std::vector<uint8_t> blob = fdt.finish();
  ASSERT_EQ(fdt_check_header(blob.data()), 0);
  EXPECT_GT(blob.size(), 50000u);
  EXPECT_GE(fdt_path_offset(blob.data(), "/node499"), 0);
}

TEST(FdtWriter, FinishWithAnOpenNodeIsAnError) {
  FdtWriter fdt;
  auto root = fdt.begin_node("");
  auto open = fdt.begin_node("open");
  try {
    fdt.finish();
    ADD_FAILURE() << "finished";
  } catch (const FdtError& e) {
    EXPECT_NE(std::string(e.what()).find("2 node(s) open"), std::string::npos) << e.what();
  }
}

TEST(FdtWriter, ErrorsNameTheCallAndLibfdtsReason) {
  FdtWriter fdt;
  { auto root = fdt.begin_node(""); }
  fdt.finish();
  try {
    fdt.property_u32("late", 1);
    ADD_FAILURE() << "accepted";
  } catch (const FdtError& e) {
    EXPECT_NE(std::string(e.what()).find("fdt_property(\"late\")"), std::string::npos) << e.what();
  }
  // libfdt's own errors carry its name for them: a runaway property hits
  // the writer's 16 MiB ceiling.
  FdtWriter big;
  auto root = big.begin_node("");
  try {
    big.property("huge", std::vector<uint8_t>(size_t{17} << 20));
    ADD_FAILURE() << "accepted";
  } catch (const FdtError& e) {
    EXPECT_NE(std::string(e.what()).find("fdt_property(\"huge\") failed: FDT_ERR_NOSPACE"),
              std::string::npos)
        << e.what();
  }
}

TEST(FdtWriter, AnExceptionInsideANodeUnwindsCleanly) {
  FdtWriter fdt;
  EXPECT_THROW(
      {
        auto root = fdt.begin_node("");
        auto child = fdt.begin_node("child");
        throw std::runtime_error("building failed");
      },
      std::runtime_error);
}

}  // namespace
}  // namespace kvmmio::vmm
