// SPDX-License-Identifier: BSD-2-Clause
// The guest device tree, checked node by node through libfdt for 1/2/4
// vCPUs, GICv3/v2, 0/1/3 virtio-mmio devices, with and without an initrd;
// `dtc -I dtb -O dts` must decompile every one without a warning, and two
// configurations are compared with their full expected decompilation.
#include "vmm/boot/device_tree.h"

#include <gtest/gtest.h>
#include <libfdt.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>

#include "test_files.h"
#include "vmm/boot/memory_map_arm64.h"

namespace kvmmio::vmm {
namespace {

using arm64::GicVersion;

constexpr const char* kDtc = "/usr/bin/dtc";

DeviceTreeSpec make_spec(int cpus, GicVersion gic, int devices, bool initrd) {
  DeviceTreeSpec s;
  s.ram_size = uint64_t{512} << 20;
  for (int i = 0; i < cpus; ++i) s.cpu_mpidrs.push_back(mpidr_of_vcpu(i));
  s.gic = gic;
  s.bootargs = "console=ttyAMA0 earlycon quiet";
  if (initrd) s.initrd = GuestRange{0x5e000000, 0x5e123456};
  for (int i = 0; i < devices; ++i) s.virtio_mmio.push_back(layout::virtio_mmio_slot(i));
  s.rng_seed.assign(32, 0xa5);
  s.kaslr_seed = 0x0123456789abcdefULL;
  return s;
}

// A property as big-endian cells.
std::vector<uint32_t> cells(const void* fdt, int node, const char* name) {
  int len = 0;
  const auto* p = static_cast<const fdt32_t*>(fdt_getprop(fdt, node, name, &len));
  if (!p) return {};
  std::vector<uint32_t> out;
  for (int i = 0; i < len / 4; ++i) out.push_back(fdt32_to_cpu(p[i]));
  return out;
}

std::string str(const void* fdt, int node, const char* name) {
  int len = 0;
  const char* p = static_cast<const char*>(fdt_getprop(fdt, node, name, &len));
  return p ? std::string(p, len > 0 ? len - 1 : 0) : "(missing)";
}

int node(const void* fdt, const std::string& path) {
  const int off = fdt_path_offset(fdt, path.c_str());
  EXPECT_GE(off, 0) << path << ": " << fdt_strerror(off);
  return off;
}

std::vector<uint32_t> reg64(std::initializer_list<uint64_t> values) {
  std::vector<uint32_t> out;
  for (uint64_t v : values)
    out.insert(out.end(), {static_cast<uint32_t>(v >> 32), static_cast<uint32_t>(v)});
  return out;
}

struct DtcResult {
  int status = -1;
  std::string dts;
  std::string warnings;
};

// Runs dtc on the blob. dtc is a hard dependency of `make check`
// (scripts/install-deps.sh installs device-tree-compiler).
DtcResult decompile(const std::vector<uint8_t>& blob) {
  DtcResult r;
  if (::access(kDtc, X_OK) != 0) {
    ADD_FAILURE() << kDtc << " is missing: install device-tree-compiler (scripts/install-deps.sh); "
                  << "the device tree tests need it";
    return r;
  }
  test::TempDir dir;
  test::write_file(dir.file("t.dtb"), blob);
  const std::string cmd = std::string(kDtc) + " -I dtb -O dts -o " + dir.file("t.dts") + " " +
                          dir.file("t.dtb") + " 2>" + dir.file("err");
  const int st = std::system(cmd.c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.dts = slurp(dir.file("t.dts"));
  r.warnings = slurp(dir.file("err"));
  return r;
}

using Config = std::tuple<int, GicVersion, int, bool>;

class DeviceTree : public testing::TestWithParam<Config> {};

TEST_P(DeviceTree, NodesFollowTheBindingsAndTheMemoryMap) {
  const auto [ncpus, gic, ndevices, with_initrd] = GetParam();
  const DeviceTreeSpec spec = make_spec(ncpus, gic, ndevices, with_initrd);
  const std::vector<uint8_t> blob = build_device_tree(spec);
  const void* f = blob.data();
  ASSERT_EQ(fdt_check_header(f), 0);
  ASSERT_LE(blob.size(), BootLayout::kDtbMaxSize);

  // Root.
  EXPECT_EQ(str(f, 0, "compatible"), "linux,dummy-virt");
  EXPECT_EQ(cells(f, 0, "#address-cells"), std::vector<uint32_t>{2});
  EXPECT_EQ(cells(f, 0, "#size-cells"), std::vector<uint32_t>{2});
  EXPECT_EQ(cells(f, 0, "interrupt-parent"), std::vector<uint32_t>{kGicPhandle});

  // Memory.
  const int mem = node(f, "/memory@40000000");
  EXPECT_EQ(str(f, mem, "device_type"), "memory");
  EXPECT_EQ(cells(f, mem, "reg"), reg64({layout::kRamBase, spec.ram_size}));

  // CPUs: one node per vCPU, reg = MPIDR affinity, PSCI enable method.
  const int cpus = node(f, "/cpus");
  EXPECT_EQ(cells(f, cpus, "#address-cells"), std::vector<uint32_t>{1});
  EXPECT_EQ(cells(f, cpus, "#size-cells"), std::vector<uint32_t>{0});
  int count = 0, child;
  fdt_for_each_subnode(child, f, cpus) {
    const uint64_t mpidr = mpidr_of_vcpu(count);
    char name[32];
    std::snprintf(name, sizeof name, "cpu@%llx", static_cast<unsigned long long>(mpidr));
    EXPECT_STREQ(fdt_get_name(f, child, nullptr), name);
    EXPECT_EQ(str(f, child, "device_type"), "cpu");
    EXPECT_EQ(str(f, child, "enable-method"), "psci");
    EXPECT_EQ(str(f, child, "compatible"), "arm,arm-v8");
    EXPECT_EQ(cells(f, child, "reg"), std::vector<uint32_t>{static_cast<uint32_t>(mpidr)});
    ++count;
  }
  EXPECT_EQ(count, ncpus);

  // PSCI through HVC, handled in KVM.
  const int psci = node(f, "/psci");
  EXPECT_EQ(str(f, psci, "compatible"), "arm,psci-0.2");
  EXPECT_EQ(str(f, psci, "method"), "hvc");

  // GIC.
  const int intc = node(f, kGicPath);
  EXPECT_EQ(fdt_node_offset_by_phandle(f, kGicPhandle), intc);
  EXPECT_EQ(cells(f, intc, "#interrupt-cells"), std::vector<uint32_t>{3});
  EXPECT_NE(fdt_getprop(f, intc, "interrupt-controller", nullptr), nullptr);
  if (gic == GicVersion::kV3) {
    EXPECT_EQ(str(f, intc, "compatible"), "arm,gic-v3");
    EXPECT_EQ(cells(f, intc, "reg"), reg64({0x08000000, 0x10000, 0x080a0000, 0x20000ull * ncpus}));
  } else {
    EXPECT_EQ(str(f, intc, "compatible"), "arm,cortex-a15-gic");
    EXPECT_EQ(cells(f, intc, "reg"), reg64({0x08000000, 0x1000, 0x08010000, 0x2000}));
  }

  // Architected timer: secure, non-secure, virtual, hypervisor PPIs,
  // level-high; on GICv2 with the mask of CPUs in bits 15:8.
  const int timer = node(f, "/timer");
  EXPECT_EQ(str(f, timer, "compatible"), "arm,armv8-timer");
  const uint32_t tflags = 4 | (gic == GicVersion::kV2 ? ((1u << ncpus) - 1) << 8 : 0);
  EXPECT_EQ(cells(f, timer, "interrupts"),
            (std::vector<uint32_t>{1, 13, tflags, 1, 14, tflags, 1, 11, tflags, 1, 10, tflags}));

  // UART and its clock.
  const int uart = node(f, kUartPath);
  int len = 0;
  const char* compat = static_cast<const char*>(fdt_getprop(f, uart, "compatible", &len));
  ASSERT_EQ(len, 24);
  EXPECT_EQ(std::memcmp(compat, "arm,pl011\0arm,primecell\0", 24), 0);
  EXPECT_EQ(cells(f, uart, "reg"), reg64({0x09000000, 0x1000}));
  EXPECT_EQ(cells(f, uart, "interrupts"), (std::vector<uint32_t>{kGicSpi, 1, kIrqTypeLevelHigh}));
  EXPECT_EQ(cells(f, uart, "clocks"),
            (std::vector<uint32_t>{kUartClockPhandle, kUartClockPhandle}));
  const char* names = static_cast<const char*>(fdt_getprop(f, uart, "clock-names", &len));
  ASSERT_EQ(len, 17);
  EXPECT_EQ(std::memcmp(names, "uartclk\0apb_pclk\0", 17), 0);
  const int clk = fdt_node_offset_by_phandle(f, kUartClockPhandle);
  ASSERT_GE(clk, 0);
  EXPECT_EQ(str(f, clk, "compatible"), "fixed-clock");
  EXPECT_EQ(cells(f, clk, "#clock-cells"), std::vector<uint32_t>{0});
  EXPECT_EQ(cells(f, clk, "clock-frequency"), std::vector<uint32_t>{24000000});

  // virtio-mmio: one node per slot, 0x200 apart, edge-rising SPIs from 16.
  int virtio = 0;
  for (int off = fdt_node_offset_by_compatible(f, -1, "virtio,mmio"); off >= 0;
       off = fdt_node_offset_by_compatible(f, off, "virtio,mmio")) {
    const uint64_t base = 0x0a000000 + 0x10000ull * virtio;
    char name[32];
    std::snprintf(name, sizeof name, "virtio@%llx", static_cast<unsigned long long>(base));
    EXPECT_STREQ(fdt_get_name(f, off, nullptr), name);
    EXPECT_EQ(cells(f, off, "reg"), reg64({base, 0x200}));
    EXPECT_EQ(cells(f, off, "interrupts"),
              (std::vector<uint32_t>{kGicSpi, 16u + virtio, kIrqTypeEdgeRising}));
    EXPECT_NE(fdt_getprop(f, off, "dma-coherent", nullptr), nullptr);
    ++virtio;
  }
  EXPECT_EQ(virtio, ndevices);

  // /chosen.
  const int chosen = node(f, "/chosen");
  EXPECT_EQ(str(f, chosen, "bootargs"), spec.bootargs);
  EXPECT_EQ(str(f, chosen, "stdout-path"), kUartPath);
  EXPECT_EQ(fdt_path_offset(f, str(f, chosen, "stdout-path").c_str()), uart);
  if (with_initrd) {
    EXPECT_EQ(cells(f, chosen, "linux,initrd-start"), reg64({spec.initrd->start}));
    EXPECT_EQ(cells(f, chosen, "linux,initrd-end"), reg64({spec.initrd->end}));
  } else {
    EXPECT_EQ(fdt_getprop(f, chosen, "linux,initrd-start", nullptr), nullptr);
    EXPECT_EQ(fdt_getprop(f, chosen, "linux,initrd-end", nullptr), nullptr);
  }
  fdt_getprop(f, chosen, "rng-seed", &len);
  EXPECT_EQ(len, 32);
  EXPECT_EQ(cells(f, chosen, "kaslr-seed"), reg64({spec.kaslr_seed}));
  EXPECT_EQ(str(f, node(f, "/aliases"), "serial0"), kUartPath);

  // dtc: decompiles, no warnings, and sees the same virtio nodes.
  const DtcResult dtc = decompile(blob);
  EXPECT_EQ(dtc.status, 0);
  EXPECT_EQ(dtc.warnings, "");
  size_t found = 0;
  for (size_t at = dtc.dts.find("\"virtio,mmio\""); at != std::string::npos;
       at = dtc.dts.find("\"virtio,mmio\"", at + 1))
    ++found;
  EXPECT_EQ(found, static_cast<size_t>(ndevices));
}

std::string config_name(const testing::TestParamInfo<Config>& info) {
  const auto [cpus, gic, devices, initrd] = info.param;
  return std::to_string(cpus) + "cpu_" + (gic == GicVersion::kV3 ? "v3_" : "v2_") +
         std::to_string(devices) + "dev_" + (initrd ? "initrd" : "noinitrd");
}

INSTANTIATE_TEST_SUITE_P(Configurations, DeviceTree,
                         testing::Combine(testing::Values(1, 2, 4),
                                          testing::Values(GicVersion::kV3, GicVersion::kV2),
                                          testing::Values(0, 1, 3), testing::Bool()),
                         config_name);

// The full decompilation of two configurations: any change to the tree
// shows up here as a readable diff.
TEST(DeviceTreeDtc, GicV3TwoCpusOneDeviceWithInitrd) {
  const DtcResult dtc = decompile(build_device_tree(make_spec(2, GicVersion::kV3, 1, true)));
  ASSERT_EQ(dtc.status, 0);
  EXPECT_EQ(dtc.warnings, "");
  EXPECT_EQ(dtc.dts, R"(/dts-v1/;

/ {
	compatible = "linux,dummy-virt";
	model = "kvmmio";
	#address-cells = <0x02>;
	#size-cells = <0x02>;
	interrupt-parent = <0x01>;

	chosen {
		bootargs = "console=ttyAMA0 earlycon quiet";
		stdout-path = "/pl011@9000000";
		linux,initrd-start = <0x00 0x5e000000>;
		linux,initrd-end = <0x00 0x5e123456>;
		rng-seed = <0xa5a5a5a5 0xa5a5a5a5 0xa5a5a5a5 0xa5a5a5a5 0xa5a5a5a5 0xa5a5a5a5 0xa5a5a5a5 0xa5a5a5a5>;
		kaslr-seed = <0x1234567 0x89abcdef>;
	};

	aliases {
		serial0 = "/pl011@9000000";
	};

	memory@40000000 {
		device_type = "memory";
		reg = <0x00 0x40000000 0x00 0x20000000>;
	};

	cpus {
		#address-cells = <0x01>;
		#size-cells = <0x00>;

		cpu@0 {
			device_type = "cpu";
			compatible = "arm,arm-v8";
			enable-method = "psci";
			reg = <0x00>;
		};

		cpu@1 {
			device_type = "cpu";
			compatible = "arm,arm-v8";
			enable-method = "psci";
			reg = <0x01>;
		};
	};

	psci {
		compatible = "arm,psci-0.2";
		method = "hvc";
	};

	interrupt-controller@8000000 {
		compatible = "arm,gic-v3";
		reg = <0x00 0x8000000 0x00 0x10000 0x00 0x80a0000 0x00 0x40000>;
		#interrupt-cells = <0x03>;
		interrupt-controller;
		#address-cells = <0x00>;
		phandle = <0x01>;
	};

	timer {
		compatible = "arm,armv8-timer";
		interrupts = <0x01 0x0d 0x04 0x01 0x0e 0x04 0x01 0x0b 0x04 0x01 0x0a 0x04>;
	};

	apb-pclk {
		compatible = "fixed-clock";
		#clock-cells = <0x00>;
		clock-frequency = <0x16e3600>;
		clock-output-names = "clk24mhz";
		phandle = <0x02>;
	};

	pl011@9000000 {
		compatible = "arm,pl011\0arm,primecell";
		reg = <0x00 0x9000000 0x00 0x1000>;
		interrupts = <0x00 0x01 0x04>;
		clocks = <0x02 0x02>;
		clock-names = "uartclk\0apb_pclk";
	};

	pl031@9010000 {
		compatible = "arm,pl031\0arm,primecell";
		reg = <0x00 0x9010000 0x00 0x1000>;
		interrupts = <0x00 0x02 0x04>;
		clocks = <0x02>;
		clock-names = "apb_pclk";
	};

	pl061@9030000 {
		compatible = "arm,pl061\0arm,primecell";
		reg = <0x00 0x9030000 0x00 0x1000>;
		interrupts = <0x00 0x07 0x04>;
		#gpio-cells = <0x02>;
		gpio-controller;
		clocks = <0x02>;
		clock-names = "apb_pclk";
		phandle = <0x03>;
	};

	gpio-keys {
		compatible = "gpio-keys";

		poweroff {
			label = "GPIO Key Poweroff";
			linux,code = <0x74>;
			gpios = <0x03 0x03 0x00>;
		};
	};

	virtio@a000000 {
		compatible = "virtio,mmio";
		reg = <0x00 0xa000000 0x00 0x200>;
		interrupts = <0x00 0x10 0x01>;
		dma-coherent;
	};
};
)");
}

TEST(DeviceTreeDtc, GicV2FourCpusCarriesTheCpuMaskInTimerPpis) {
  const DtcResult dtc = decompile(build_device_tree(make_spec(4, GicVersion::kV2, 0, false)));
  ASSERT_EQ(dtc.status, 0);
  EXPECT_EQ(dtc.warnings, "");
  EXPECT_NE(dtc.dts.find(R"(	interrupt-controller@8000000 {
		compatible = "arm,cortex-a15-gic";
		reg = <0x00 0x8000000 0x00 0x1000 0x00 0x8010000 0x00 0x2000>;)"),
            std::string::npos)
      << dtc.dts;
  EXPECT_NE(dtc.dts.find(
                "interrupts = <0x01 0x0d 0xf04 0x01 0x0e 0xf04 0x01 0x0b 0xf04 0x01 0x0a 0xf04>;"),
            std::string::npos)
      << dtc.dts;
  EXPECT_EQ(dtc.dts.find("linux,initrd"), std::string::npos);
  EXPECT_EQ(dtc.dts.find("virtio"), std::string::npos);
}

TEST(DeviceTree, MpidrsFollowKvmsAssignment) {
  EXPECT_EQ(mpidr_of_vcpu(0), 0x0u);
  EXPECT_EQ(mpidr_of_vcpu(15), 0xfu);
  EXPECT_EQ(mpidr_of_vcpu(16), 0x100u);
  EXPECT_EQ(mpidr_of_vcpu(122), 0x70au);
  EXPECT_EQ(mpidr_affinity(0x80000000ULL | 0x100), 0x100u);  // RES1 bit 31 dropped
  EXPECT_EQ(mpidr_affinity(0xff01000000ULL | 0x40000000 | 0x3), 0xff00000003ULL);
}

TEST(DeviceTree, RandomSeedsAreFreshAndPresent) {
  DeviceTreeSpec a, b;
  add_random_seeds(a);
  add_random_seeds(b);
  EXPECT_EQ(a.rng_seed.size(), 32u);
  EXPECT_NE(a.rng_seed, b.rng_seed);
  EXPECT_NE(a.kaslr_seed, 0u);
}

// The power key as QEMU's virt machine describes it, so gpio-pl061 and
// gpio-keys bind: a PL061 (AMBA, clocked, level SPI 7, a GPIO controller
// of two cells) and a gpio-keys button KEY_POWER on its pin 3, active high.
TEST(DeviceTree, ThePowerKeyIsAPl061PinThatGpioKeysReportsAsKeyPower) {
  const std::vector<uint8_t> blob = build_device_tree(make_spec(1, GicVersion::kV3, 0, false));
  const void* f = blob.data();
  const int gpio = node(f, kGpioPath);
  int len = 0;
  const char* compat = static_cast<const char*>(fdt_getprop(f, gpio, "compatible", &len));
  ASSERT_EQ(len, 24);
  EXPECT_EQ(std::memcmp(compat, "arm,pl061\0arm,primecell\0", 24), 0);
  EXPECT_EQ(cells(f, gpio, "reg"), reg64({0x09030000, 0x1000}));
  EXPECT_EQ(cells(f, gpio, "interrupts"), (std::vector<uint32_t>{kGicSpi, 7, kIrqTypeLevelHigh}));
  EXPECT_EQ(cells(f, gpio, "#gpio-cells"), std::vector<uint32_t>{2});
  EXPECT_NE(fdt_getprop(f, gpio, "gpio-controller", nullptr), nullptr);
  EXPECT_EQ(cells(f, gpio, "clocks"), std::vector<uint32_t>{kUartClockPhandle});
  EXPECT_EQ(str(f, gpio, "clock-names"), "apb_pclk");
  EXPECT_EQ(fdt_node_offset_by_phandle(f, kGpioPhandle), gpio);

  EXPECT_EQ(str(f, node(f, "/gpio-keys"), "compatible"), "gpio-keys");
  const int key = node(f, kPowerKeyPath);
  EXPECT_EQ(cells(f, key, "linux,code"), std::vector<uint32_t>{116});
  EXPECT_EQ(cells(f, key, "gpios"), (std::vector<uint32_t>{kGpioPhandle, 3, 0}));
  EXPECT_EQ(str(f, key, "label"), "GPIO Key Poweroff");
}

// The real-time clock as QEMU's virt machine describes it, so the AMBA
// bus binds rtc-pl031: a PL031, clocked, on level SPI 2 (with an
// interrupt the driver offers the alarm).
TEST(DeviceTree, TheRtcIsAClockedPl031WithItsAlarmInterrupt) {
  const std::vector<uint8_t> blob = build_device_tree(make_spec(1, GicVersion::kV3, 0, false));
  const void* f = blob.data();
  const int rtc = node(f, kRtcPath);
  int len = 0;
  const char* compat = static_cast<const char*>(fdt_getprop(f, rtc, "compatible", &len));
  ASSERT_EQ(len, 24);
  EXPECT_EQ(std::memcmp(compat, "arm,pl031\0arm,primecell\0", 24), 0);
  EXPECT_EQ(cells(f, rtc, "reg"), reg64({0x09010000, 0x1000}));
  EXPECT_EQ(cells(f, rtc, "interrupts"), (std::vector<uint32_t>{kGicSpi, 2, kIrqTypeLevelHigh}));
  EXPECT_EQ(cells(f, rtc, "clocks"), std::vector<uint32_t>{kUartClockPhandle});
  EXPECT_EQ(str(f, rtc, "clock-names"), "apb_pclk");
}

TEST(MemoryMap, RegionsDoNotOverlapAndFitTheirLimits) {
  // GICv3 redistributors of the largest guest end at or before the UART.
  EXPECT_LE(layout::kGicV3RedistBase + arm64::GicLayout::kRedistSizePerCpu * layout::kMaxCpusGicV3,
            layout::kUartBase);
  EXPECT_LE(layout::kGicDistBase + arm64::GicLayout::kDistSizeV3, layout::kGicV3RedistBase);
  EXPECT_LE(layout::kGicDistBase + arm64::GicLayout::kDistSizeV2, layout::kGicV2CpuBase);
  EXPECT_LE(layout::kGicV2CpuBase + arm64::GicLayout::kCpuSizeV2, layout::kGicV3RedistBase);
  EXPECT_LE(layout::kUartBase + layout::kUartSize, layout::kRtcBase);
  EXPECT_LE(layout::kRtcBase + layout::kRtcSize, layout::kGpioBase);
  EXPECT_LE(layout::kGpioBase + layout::kGpioSize, layout::kVirtioMmioBase);
  const auto last = layout::virtio_mmio_slot(layout::kVirtioMmioSlots - 1);
  EXPECT_LE(last.base + last.size, layout::kRamBase);
  EXPECT_LT(last.spi + arm64::kSpiBase, layout::kGicNrIrqs);
  EXPECT_EQ(layout::virtio_mmio_slot(2).base, 0x0a020000u);
  EXPECT_EQ(layout::virtio_mmio_slot(2).spi, 18u);
}

}  // namespace
}  // namespace kvmmio::vmm
