// SPDX-License-Identifier: BSD-2-Clause
// `kvmmio run` end to end without a VM: --dump-dtb writes the tree a guest
// with these options would get; bad inputs are UserErrors (exit status 2)
// that leave no output file behind; on hosts other than arm64, running is
// refused with a message that says where it works.
#include "vmm/cli/run_command.h"

#include <gtest/gtest.h>
#include <libfdt.h>
#include <sys/stat.h>

#include "test_files.h"
#include "vmm/boot/device_tree.h"
#include "vmm/cli/device_specs.h"
#include "vmm/cli/devices.h"

namespace kvmmio::vmm {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

class RunCommand : public testing::Test {
 protected:
  RunCommand() {
    test::write_file(kernel, test::make_image(0, 8 * kMiB, test::kModernFlags, 256 * 1024));
    test::write_file(initrd, std::vector<uint8_t>(100000, 0x42));
  }
  RunOptions options() const {
    RunOptions o;
    o.kernel = kernel;
    o.mem = 128 * kMiB;
    return o;
  }
  // The virtio,mmio nodes of the tree --dump-dtb wrote, in order.
  std::vector<std::string> virtio_nodes() const {
    const std::vector<uint8_t> blob = test::read_file(dtb);
    std::vector<std::string> names;
    for (int off = fdt_node_offset_by_compatible(blob.data(), -1, "virtio,mmio"); off >= 0;
         off = fdt_node_offset_by_compatible(blob.data(), off, "virtio,mmio"))
      names.push_back(fdt_get_name(blob.data(), off, nullptr));
    return names;
  }
  static bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }
  std::string user_error(const RunOptions& o) {
    try {
      run_command(o);
    } catch (const UserError& e) {
      return e.what();
    }
    return "(no UserError)";
  }

  test::TempDir dir;
  const std::string kernel = dir.file("Image");
  const std::string initrd = dir.file("initrd");
  const std::string dtb = dir.file("out.dtb");
};

TEST_F(RunCommand, DumpDtbWritesTheGuestsTree) {
  RunOptions o = options();
  o.initrd = initrd;
  o.cpus = 2;
  o.dump_dtb = dtb;
  EXPECT_EQ(run_command(o), 0);
  const std::vector<uint8_t> blob = test::read_file(dtb);
  const void* f = blob.data();
  ASSERT_EQ(fdt_check_header(f), 0);
  const int chosen = fdt_path_offset(f, "/chosen");
  int len = 0;
  EXPECT_STREQ(static_cast<const char*>(fdt_getprop(f, chosen, "bootargs", &len)),
               "console=ttyAMA0");
  const auto* start =
      static_cast<const fdt32_t*>(fdt_getprop(f, chosen, "linux,initrd-start", &len));
  const auto* end = static_cast<const fdt32_t*>(fdt_getprop(f, chosen, "linux,initrd-end", &len));
  ASSERT_TRUE(start && end);
  const uint64_t s = (uint64_t{fdt32_to_cpu(start[0])} << 32) | fdt32_to_cpu(start[1]);
  const uint64_t e = (uint64_t{fdt32_to_cpu(end[0])} << 32) | fdt32_to_cpu(end[1]);
  EXPECT_EQ(e - s, 100000u);
  EXPECT_GE(s, 0x40000000u + 8 * kMiB);    // above the kernel's image_size
  EXPECT_LE(e, 0x40000000u + 126 * kMiB);  // below the DTB's 2 MiB block
  EXPECT_GE(fdt_path_offset(f, "/cpus/cpu@1"), 0);
  const int gic = fdt_path_offset(f, kGicPath);
  EXPECT_STREQ(static_cast<const char*>(fdt_getprop(f, gic, "compatible", &len)),
               "arm,gic-v3");  // --gic auto
}

TEST_F(RunCommand, DumpDtbWithGicV2) {
  RunOptions o = options();
  o.gic = GicChoice::kV2;
  o.dump_dtb = dtb;
  EXPECT_EQ(run_command(o), 0);
  const std::vector<uint8_t> blob = test::read_file(dtb);
  int len = 0;
  EXPECT_STREQ(static_cast<const char*>(fdt_getprop(
                   blob.data(), fdt_path_offset(blob.data(), kGicPath), "compatible", &len)),
               "arm,cortex-a15-gic");
  o.cpus = 9;
  EXPECT_NE(user_error(o).find("at most 8 vCPUs"), std::string::npos);
}

// --console virtio: a virtio,mmio node for the console after the --net
// devices' ones, and the hvc0 command line; the PL011 stays (for earlycon, when asked for).
TEST_F(RunCommand, DumpDtbWithTheVirtioConsole) {
  RunOptions o = options();
  o.dump_dtb = dtb;
  o.rng = false;  // the entropy device's slot: DumpDtbHasTheEntropyDeviceLast
  o.console = ConsoleKind::kVirtio;
  EXPECT_EQ(run_command(o), 0);
  EXPECT_EQ(virtio_nodes(), std::vector<std::string>{"virtio@a000000"});
  const std::vector<uint8_t> blob = test::read_file(dtb);
  int len = 0;
  EXPECT_STREQ(static_cast<const char*>(
                   fdt_getprop(blob.data(), fdt_path_offset(blob.data(), "/chosen"), "bootargs", &len)),
               "console=hvc0");
  EXPECT_STREQ(static_cast<const char*>(fdt_getprop(
                   blob.data(), fdt_path_offset(blob.data(), "/chosen"), "stdout-path", &len)),
               kUartPath);
  EXPECT_GE(fdt_path_offset(blob.data(), kUartPath), 0);

  // After a --net device: slot 1 (the net's slot does not move).
  o.nets.push_back(parse_net_spec("tap=kvmtap9"));
  EXPECT_EQ(run_command(o), 0);
  EXPECT_EQ(virtio_nodes(), (std::vector<std::string>{"virtio@a000000", "virtio@a010000"}));
  EXPECT_EQ(plan_virtio_devices(o, STDOUT_FILENO).back().type, "virtio-console");
  o.nets.clear();

  // The serial console has no virtio-mmio device at all.
  o.console = ConsoleKind::kSerial;
  EXPECT_EQ(run_command(o), 0);
  EXPECT_TRUE(virtio_nodes().empty());
}

// The entropy device is on by default, in the slot after every other
// virtio device; --rng off drops it and moves nothing else.
TEST_F(RunCommand, DumpDtbHasTheEntropyDeviceLast) {
  RunOptions o = options();
  o.dump_dtb = dtb;
  EXPECT_EQ(run_command(o), 0);
  EXPECT_EQ(virtio_nodes(), std::vector<std::string>{"virtio@a000000"});
  EXPECT_EQ(plan_virtio_devices(o, STDOUT_FILENO).back().type, "virtio-rng");

  o.nets.push_back(parse_net_spec("tap=kvmtap9"));
  o.console = ConsoleKind::kVirtio;
  o.disks.push_back(parse_disk_spec("vda.img"));
  const auto plan = [&o] {
    std::vector<std::string> slots;
    for (const VirtioDevicePlan& p : plan_virtio_devices(o, STDOUT_FILENO)) slots.push_back(p.name + " " + p.type);
    return slots;
  };
  EXPECT_EQ(plan(), (std::vector<std::string>{"net0 virtio-net", "console0 virtio-console", "disk0 virtio-blk",
                                              "rng0 virtio-rng"}));
  EXPECT_EQ(run_command(o), 0);
  EXPECT_EQ(virtio_nodes().size(), 4u);

  o.rng = false;
  EXPECT_EQ(plan(), (std::vector<std::string>{"net0 virtio-net", "console0 virtio-console", "disk0 virtio-blk"}));
  EXPECT_EQ(run_command(o), 0);
  EXPECT_EQ(virtio_nodes().size(), 3u);
}

TEST_F(RunCommand, InputProblemsAreUserErrorsAndLeaveNoFiles) {
  RunOptions o = options();
  o.dump_dtb = dtb;
  o.stats = dir.file("stats.json");

  RunOptions bad_kernel = o;
  bad_kernel.kernel = initrd;  // not an Image
  EXPECT_NE(user_error(bad_kernel).find("not an arm64 Linux Image"), std::string::npos);

  RunOptions no_kernel = o;
  no_kernel.kernel = dir.file("missing");
  EXPECT_NE(user_error(no_kernel).find("cannot open"), std::string::npos);

  RunOptions no_initrd = o;
  no_initrd.initrd = dir.file("missing-initrd");
  EXPECT_NE(user_error(no_initrd).find("--initrd"), std::string::npos);

  RunOptions small = o;
  small.mem = 8 * kMiB;
  EXPECT_NE(user_error(small).find("at least --mem"), std::string::npos);

  RunOptions unwritable = o;
  unwritable.dump_dtb = dir.file("no/such/dir/out.dtb");
  EXPECT_NE(user_error(unwritable).find("--dump-dtb"), std::string::npos);

  EXPECT_FALSE(exists(dtb));
  EXPECT_FALSE(exists(*o.stats));
}

#if !defined(__aarch64__)
TEST_F(RunCommand, RunningNeedsAnArm64Host) {
  RunOptions o = options();
  o.stats = dir.file("stats.json");
  const std::string msg = user_error(o);
  EXPECT_NE(msg.find("arm64 hosts only"), std::string::npos) << msg;
  EXPECT_NE(msg.find("scripts/arm64/run.sh"), std::string::npos) << msg;
  EXPECT_FALSE(exists(*o.stats));  // opened early, removed when nothing ran
}
#endif

}  // namespace
}  // namespace kvmmio::vmm
