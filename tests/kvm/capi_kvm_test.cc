// SPDX-License-Identifier: BSD-2-Clause
// The C API (kvmmio/kvmmio.h) on real /dev/kvm, as a C embedder uses it: it
// adopts a running machine's VM (the TestMachine plays the embedder: its
// VM, RAM, vCPU and interrupt controller), puts a device of C callbacks
// behind a transport with the register mirror, and hands the transport the
// window's exits. The guest's register loads read the mirror with no exit,
// a request raises an interrupt the guest takes through the GIC, and the
// handles go in the order the header asks for. Architecture-neutral: x86-64
// here, KVM/ARM in the nested arm64 platform.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/kvm.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "../guests/test_machine.h"
#include "../virtio/c_transport_window.h"
#include "../virtio/driver_ring.h"
#include "../virtio/mmio_driver.h"
#include "../virtio/reverser_c_device.h"
#include "kvm_fixture.h"
#include "kvmmio/kvmmio.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/virtio_spec.h"
#include "tests/vhost/test_backend.h"

namespace kvmmio::test {
namespace {

using namespace virtio::test;

constexpr uint32_t kGsi = 5;
constexpr uint32_t kFirstSlot = 8;  // the machine's own Vm uses slot 0 for its RAM
constexpr uint64_t kRing = 0x20000;  // offsets into the machine's RAM
constexpr uint64_t kIn = 0x30000;
constexpr uint64_t kOut = 0x31000;


// A transport config of the defaults but `regs`.
kvmmio_transport_config with_regs(kvmmio_regs regs) {
  kvmmio_transport_config config = KVMMIO_TRANSPORT_CONFIG_INIT;
  config.regs = regs;
  return config;
}

// The C API on a TestMachine's VM, a Reverser behind a transport at the
// machine's device window, made with `options` (NULL: the defaults).
struct CMachine {
  CMachine(Kvm& kvm, const kvmmio_transport_config* options) : machine(kvm) {
    const RamRegion& ram = *machine.vm().memory().regions()[0];
    expect_ok(kvmmio_vm_adopt(machine.vm().fd(), kFirstSlot, 2, KVMMIO_ADOPT_IRQCHIP_READY, &vm));
    expect_ok(kvmmio_vm_add_ram_host(vm, ram.gpa(), ram.size(), ram.host(), 0));
    const kvmmio_device_ops ops = reverser_ops();
    expect_ok(kvmmio_device_create(vm, &ops, sizeof ops, &state, &device));
    expect_ok(kvmmio_transport_create(vm, device, TestMachine::kTestDeviceBase, kGsi, options, &transport));
    window = std::make_unique<CTransportWindow>(transport);
    machine.device().forward_registers_to(window.get());
    driver = std::make_unique<MmioDriver>(*window);
  }
  ~CMachine() {
    machine.device().forward_registers_to(nullptr);
    kvmmio_transport_destroy(transport);
    EXPECT_EQ(kvmmio_device_destroy(device), KVMMIO_OK) << kvmmio_last_error();
    EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK) << kvmmio_last_error();
  }
  static void expect_ok(kvmmio_status s) { ASSERT_EQ(s, KVMMIO_OK) << kvmmio_last_error(); }

  // Probe, negotiate, queue 0, DRIVER_OK: the ring, in the machine's RAM.
  std::unique_ptr<DriverRing> bring_up() {
    EXPECT_TRUE(driver->probe());
    EXPECT_EQ(driver->device_id(), Reverser::kDeviceId);
    EXPECT_TRUE(driver->initialize(~uint64_t{0}));
    const auto layout = driver->setup_queue(0, TestMachine::kRamBase + kRing, 64);
    EXPECT_TRUE(layout);
    driver->driver_ok();
    return layout ? std::make_unique<DriverRing>(machine.vm().memory(), *layout) : nullptr;
  }
  uint64_t counter(const char* name) {
    uint64_t v = ~uint64_t{0};
    EXPECT_EQ(kvmmio_transport_counter(transport, name, &v), KVMMIO_OK) << kvmmio_last_error();
    return v;
  }

  TestMachine machine;
  Reverser state;
  kvmmio_vm* vm = nullptr;
  kvmmio_device* device = nullptr;
  kvmmio_transport* transport = nullptr;
  std::unique_ptr<CTransportWindow> window;
  std::unique_ptr<MmioDriver> driver;
};

class CApiKvmTest : public KvmTest {
 protected:
  bool readonly_slots() const { return kvm->check_extension(KVM_CAP_READONLY_MEM) > 0; }
};

TEST_F(CApiKvmTest, TheMirrorServesTheGuestsRegisterLoadsWithoutExits) {
  const kvmmio_transport_config mirror = with_regs(KVMMIO_REGS_MIRROR);
  CMachine m(*kvm, &mirror);
  auto ring = m.bring_up();
  ASSERT_TRUE(ring);
  if (!readonly_slots()) {
    EXPECT_EQ(kvmmio_transport_mirror_mapped(m.transport), 0);
    GTEST_SKIP() << "KVM on this host lacks KVM_CAP_READONLY_MEM: the transport fell back to regs=trap";
  }
  ASSERT_EQ(kvmmio_transport_mirror_mapped(m.transport), 1);
  const uint64_t reads = m.counter("register_reads");
  m.machine.load_load_loop(virtio::reg::kInterruptStatus, 100);
  const Report r = m.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(r.value, uint64_t{virtio::interrupt::kUsedBuffer} * 100);
  EXPECT_EQ(m.machine.mmio_exits(), TestMachine::kDoneReportMmioExits);
  EXPECT_EQ(m.counter("register_reads"), reads) << "a guest load reached the transport";
}

TEST_F(CApiKvmTest, RegsTrapHandsEveryLoadToTheEmbedder) {
  const kvmmio_transport_config trap = with_regs(KVMMIO_REGS_TRAP);
  CMachine m(*kvm, &trap);
  ASSERT_TRUE(m.bring_up());
  EXPECT_EQ(kvmmio_transport_mirror_mapped(m.transport), 0);
  const uint64_t reads = m.counter("register_reads");
  m.machine.load_load_loop(virtio::reg::kInterruptStatus, 10);
  ASSERT_EQ(m.machine.run_until_report().kind, Report::Kind::kDone);
  EXPECT_EQ(m.machine.mmio_exits(), 10 + TestMachine::kDoneReportMmioExits);
  EXPECT_EQ(m.counter("register_reads"), reads + 10);
}

TEST_F(CApiKvmTest, ARequestServedByTheCallbacksInterruptsTheGuest) {
  CMachine m(*kvm, nullptr);
  auto ring = m.bring_up();
  ASSERT_TRUE(ring);
  m.machine.load_irq_guest(kGsi);
  ASSERT_EQ(m.machine.run_until_report().kind, Report::Kind::kReady);
  const uint64_t in = TestMachine::kRamBase + kIn, out = TestMachine::kRamBase + kOut;
  ASSERT_TRUE(m.machine.vm().memory().write(in, "embedder", 8));
  const Buffer chain[] = {{in, 8, false}, {out, 64, true}};
  ring->add(chain);
  ring->publish();
  m.driver->notify(0);  // a trapped notify, as the embedder's vCPU loop hands it over
  const Report r = m.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kIrq) << to_string(r.kind);
  EXPECT_EQ(r.value, TestMachine::expected_irq_report(kGsi));
  const auto used = ring->take_used();
  ASSERT_TRUE(used);
  char got[8];
  ASSERT_TRUE(m.machine.vm().memory().read(out, got, sizeof got));
  EXPECT_EQ(std::string(got, used->len), "reddebme");
  EXPECT_EQ(m.state.interrupts, 1);
  EXPECT_EQ(m.counter("interrupts_injected"), 1u);
  EXPECT_EQ(m.counter("guest_errors"), 0u);
}

TEST_F(CApiKvmTest, HandlesGoInReverseOrderAndSayWhatIsInTheWay) {
  kvmmio_vm* vm = nullptr;
  ASSERT_EQ(kvmmio_vm_create(&vm), KVMMIO_OK) << kvmmio_last_error();
  void* host = nullptr;
  ASSERT_EQ(kvmmio_vm_add_ram(vm, 0x40000000, 1 << 20, &host), KVMMIO_OK) << kvmmio_last_error();
  ASSERT_NE(host, nullptr);
  Reverser state;
  const kvmmio_device_ops ops = reverser_ops();
  kvmmio_device* device = nullptr;
  ASSERT_EQ(kvmmio_device_create(vm, &ops, sizeof ops, &state, &device), KVMMIO_OK) << kvmmio_last_error();
  kvmmio_transport* transport = nullptr;
  kvmmio_transport_config legacy = with_regs(KVMMIO_REGS_TRAP);
  legacy.version = 1;
  ASSERT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, &legacy, &transport), KVMMIO_OK)
      << kvmmio_last_error();
  uint32_t version = 0;
  ASSERT_EQ(kvmmio_transport_mmio(transport, virtio::reg::kVersion, &version, 4, 0), KVMMIO_OK);
  EXPECT_EQ(version, virtio::kVersionLegacy);

  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_ERR_BUSY);
  EXPECT_NE(std::string(kvmmio_last_error()).find("destroy them first"), std::string::npos) << kvmmio_last_error();
  EXPECT_EQ(kvmmio_device_destroy(device), KVMMIO_ERR_BUSY);
  kvmmio_transport_destroy(transport);
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_ERR_BUSY);
  EXPECT_EQ(kvmmio_device_destroy(device), KVMMIO_OK);
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK);
}

TEST_F(CApiKvmTest, MistakesAreRefusedWithAMessage) {
  kvmmio_vm* vm = nullptr;
  ASSERT_EQ(kvmmio_vm_create(&vm), KVMMIO_OK) << kvmmio_last_error();
  Reverser state;
  kvmmio_device_ops ops = reverser_ops();
  kvmmio_device* device = nullptr;
  // A caller built against a header without the reset callback.
  ASSERT_EQ(kvmmio_device_create(vm, &ops, offsetof(kvmmio_device_ops, reset), &state, &device), KVMMIO_OK)
      << kvmmio_last_error();
  kvmmio_device* too_old = nullptr;
  EXPECT_EQ(kvmmio_device_create(vm, &ops, 8, &state, &too_old), KVMMIO_ERR_INVALID);
  EXPECT_EQ(too_old, nullptr);
  ops.queue_max_size = 100;
  EXPECT_EQ(kvmmio_device_create(vm, &ops, sizeof ops, &state, &too_old), KVMMIO_ERR_INVALID);
  EXPECT_NE(std::string(kvmmio_last_error()).find("power of two"), std::string::npos) << kvmmio_last_error();

  kvmmio_transport* transport = nullptr;
  const kvmmio_transport_config sometimes = with_regs(static_cast<kvmmio_regs>(7));
  EXPECT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, &sometimes, &transport), KVMMIO_ERR_INVALID);
  EXPECT_NE(std::string(kvmmio_last_error()).find("kvmmio_transport_config.regs: 7"), std::string::npos)
      << kvmmio_last_error();
  const kvmmio_transport_config trap = with_regs(KVMMIO_REGS_TRAP);
  ASSERT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, &trap, &transport), KVMMIO_OK)
      << kvmmio_last_error();
  uint64_t wide = 0;
  EXPECT_EQ(kvmmio_transport_mmio(transport, 0, &wide, 3, 0), KVMMIO_ERR_INVALID);
  EXPECT_EQ(kvmmio_transport_mmio(transport, kvmmio_transport_window_size() - 2, &wide, 4, 0), KVMMIO_ERR_INVALID);
  uint64_t value = 0;
  EXPECT_EQ(kvmmio_transport_counter(transport, "no_such_counter", &value), KVMMIO_ERR_INVALID);
  std::map<std::string, uint64_t> all;
  ASSERT_EQ(kvmmio_transport_counters(
                transport,
                [](void* o, const char* name, uint64_t v) { (*static_cast<std::map<std::string, uint64_t>*>(o))[name] = v; },
                &all),
            KVMMIO_OK);
  EXPECT_TRUE(all.count("notifies_trapped") && all.count("interrupt_acks_in_kernel") && all.count("register_reads"));
  EXPECT_EQ(kvmmio_net_uses_vhost(device), KVMMIO_ERR_INVALID) << "a callback device is no net device";
  kvmmio_device* net = nullptr;
  kvmmio_net_config no_tap = KVMMIO_NET_CONFIG_INIT;
  no_tap.tap = "";
  EXPECT_EQ(kvmmio_net_create(vm, &no_tap, &net), KVMMIO_ERR_INVALID);
  EXPECT_NE(std::string(kvmmio_last_error()).find("kvmmio_net_config.tap"), std::string::npos) << kvmmio_last_error();
  kvmmio_transport_destroy(transport);
  EXPECT_EQ(kvmmio_device_destroy(device), KVMMIO_OK);
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK);
}

// The library's block and console devices made from their configs, each
// behind a transport that a driver probes through kvmmio_transport_mmio():
// the disk offers the image's capacity, and the console takes no input
// before its driver has posted buffers. (Driven further without KVM:
// tests/unit/capi_config_test.cc.)
TEST_F(CApiKvmTest, TheBlockAndConsoleDevicesGoBehindTransports) {
  kvmmio_vm* vm = nullptr;
  ASSERT_EQ(kvmmio_vm_create(&vm), KVMMIO_OK) << kvmmio_last_error();
  char dir[] = "/tmp/kvmmio-capi-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string image = std::string(dir) + "/disk.img";
  {
    UniqueFd fd(::open(image.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::ftruncate(fd.get(), 1 << 20), 0);
  }
  kvmmio_blk_config blk = KVMMIO_BLK_CONFIG_INIT;
  blk.path = image.c_str();
  blk.read_only = 1;
  kvmmio_device* disk = nullptr;
  ASSERT_EQ(kvmmio_blk_create(vm, &blk, &disk), KVMMIO_OK) << kvmmio_last_error();

  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  const UniqueFd output_rd(fds[0]), output_wr(fds[1]);
  kvmmio_console_config con = KVMMIO_CONSOLE_CONFIG_INIT;
  con.output_fd = output_wr.get();
  kvmmio_device* console = nullptr;
  ASSERT_EQ(kvmmio_console_create(vm, &con, &console), KVMMIO_OK) << kvmmio_last_error();
  size_t taken = 1;
  EXPECT_EQ(kvmmio_console_input(console, "hi", 2, &taken), KVMMIO_OK) << kvmmio_last_error();
  EXPECT_EQ(taken, 0u) << "no driver yet, so no receive buffers";
  EXPECT_EQ(kvmmio_console_input(disk, "hi", 2, &taken), KVMMIO_ERR_INVALID) << "a disk takes no input";

  const kvmmio_transport_config trap = with_regs(KVMMIO_REGS_TRAP);
  kvmmio_transport* disk_window = nullptr;
  kvmmio_transport* console_window = nullptr;
  ASSERT_EQ(kvmmio_transport_create(vm, disk, 0x0a000000, kGsi, &trap, &disk_window), KVMMIO_OK)
      << kvmmio_last_error();
  ASSERT_EQ(kvmmio_transport_create(vm, console, 0x0a010000, kGsi + 1, &trap, &console_window), KVMMIO_OK)
      << kvmmio_last_error();
  {
    CTransportWindow window(disk_window);
    MmioDriver driver(window);
    ASSERT_TRUE(driver.probe());
    EXPECT_EQ(driver.device_id(), 2u);
    EXPECT_EQ(driver.read_config(0, 4), (1u << 20) / 512) << "the capacity, in sectors";
  }
  {
    CTransportWindow window(console_window);
    MmioDriver driver(window);
    ASSERT_TRUE(driver.probe());
    EXPECT_EQ(driver.device_id(), 3u);
  }
  EXPECT_EQ(kvmmio_device_destroy(disk), KVMMIO_ERR_BUSY);
  kvmmio_transport_destroy(console_window);
  kvmmio_transport_destroy(disk_window);
  EXPECT_EQ(kvmmio_device_destroy(console), KVMMIO_OK) << kvmmio_last_error();
  EXPECT_EQ(kvmmio_device_destroy(disk), KVMMIO_OK) << kvmmio_last_error();
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK) << kvmmio_last_error();
  (void)std::system(("rm -rf '" + std::string(dir) + "'").c_str());
}

// A vhost-user device's `create` on a backend that takes the handshake and
// never answers: the set-up's error (KVMMIO_ERR_USER) within the 100 ms
// the config gives.
template <class Config, class Create>
void expect_a_silent_backend_refused(kvmmio_vm* vm, Config config, Create create) {
  vhost::test::TestBackend silent([](vhost::test::TestBackend&, vhost::test::Message&) { return true; });
  const UniqueFd socket = silent.take_front();
  config.socket_fd = socket.get();
  config.reply_timeout_ms = 100;
  kvmmio_device* device = nullptr;
  EXPECT_EQ(create(vm, &config, &device), KVMMIO_ERR_USER);
  EXPECT_NE(std::string(kvmmio_last_error()).find("nothing within 100 ms"), std::string::npos)
      << kvmmio_last_error();
  EXPECT_EQ(device, nullptr);
}

// virtio-fs from the C API, on a socket the embedder connected to a backend
// of the test's own: the guest sees device 26 with its tag, and EVENT_IDX
// only where the backend has it; a backend that never answers is the
// set-up's error (KVMMIO_ERR_USER) within the timeout the config gives.
TEST_F(CApiKvmTest, TheFsDeviceTakesTheEmbeddersSocketAndTheBackendsRingFeatures) {
  kvmmio_vm* vm = nullptr;
  ASSERT_EQ(kvmmio_vm_create(&vm), KVMMIO_OK) << kvmmio_last_error();
  vhost::test::TestBackend backend([](vhost::test::TestBackend& b, vhost::test::Message& m) {
    // VERSION_1 and INDIRECT_DESC, no EVENT_IDX.
    if (m.request() == vhost::user::Request::kGetFeatures) b.reply_u64(m, (1ull << 32) | (1ull << 28));
    return true;
  });
  const UniqueFd socket = backend.take_front();
  kvmmio_fs_config fs = KVMMIO_FS_CONFIG_INIT;
  fs.tag = "share";
  fs.socket_fd = socket.get();
  kvmmio_device* device = nullptr;
  ASSERT_EQ(kvmmio_fs_create(vm, &fs, &device), KVMMIO_OK) << kvmmio_last_error();
  const kvmmio_transport_config trap = with_regs(KVMMIO_REGS_TRAP);
  kvmmio_transport* window = nullptr;
  ASSERT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, &trap, &window), KVMMIO_OK)
      << kvmmio_last_error();
  {
    CTransportWindow w(window);
    MmioDriver driver(w);
    ASSERT_TRUE(driver.probe());
    EXPECT_EQ(driver.device_id(), 26u);
    const uint32_t tag = driver.read_config(0, 4);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(&tag), 4), "shar");
    EXPECT_EQ(driver.read_config(36, 4), 1u) << "num_request_queues";
    EXPECT_EQ(driver.device_features() & virtio::feature::bit(virtio::feature::kRingEventIdx), 0u)
        << "EVENT_IDX offered over a backend without it";
  }
  kvmmio_transport_destroy(window);
  EXPECT_EQ(kvmmio_device_destroy(device), KVMMIO_OK) << kvmmio_last_error();

  expect_a_silent_backend_refused(vm, fs, kvmmio_fs_create);
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK) << kvmmio_last_error();
}

// vhost-user-net from the C API, on a socket the embedder connected to a
// backend of the test's own: the guest sees device 1 with the MAC the
// config gave, offered as VIRTIO_NET_F_MAC beside the backend's offloads;
// a backend that never answers is the set-up's error within the timeout.
TEST_F(CApiKvmTest, TheVhostUserNetDeviceTakesTheEmbeddersSocketAndMac) {
  kvmmio_vm* vm = nullptr;
  ASSERT_EQ(kvmmio_vm_create(&vm), KVMMIO_OK) << kvmmio_last_error();
  constexpr uint64_t kCsum = 1ull << 0, kMac = 1ull << 5, kMrgRxbuf = 1ull << 15;
  vhost::test::TestBackend backend([](vhost::test::TestBackend& b, vhost::test::Message& m) {
    // VERSION_1, INDIRECT_DESC, CSUM and MRG_RXBUF.
    if (m.request() == vhost::user::Request::kGetFeatures)
      b.reply_u64(m, (1ull << 32) | (1ull << 28) | kCsum | kMrgRxbuf);
    return true;
  });
  const UniqueFd socket = backend.take_front();
  kvmmio_vhost_user_net_config net = KVMMIO_VHOST_USER_NET_CONFIG_INIT;
  net.socket_fd = socket.get();
  const uint8_t mac[6] = {0x02, 0x6b, 0x76, 0x00, 0x00, 0x0a};
  std::memcpy(net.mac, mac, sizeof mac);
  kvmmio_device* device = nullptr;
  ASSERT_EQ(kvmmio_vhost_user_net_create(vm, &net, &device), KVMMIO_OK) << kvmmio_last_error();
  const kvmmio_transport_config trap = with_regs(KVMMIO_REGS_TRAP);
  kvmmio_transport* window = nullptr;
  ASSERT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, &trap, &window), KVMMIO_OK)
      << kvmmio_last_error();
  {
    CTransportWindow w(window);
    MmioDriver driver(w);
    ASSERT_TRUE(driver.probe());
    EXPECT_EQ(driver.device_id(), 1u);
    const uint64_t offered = driver.device_features();
    EXPECT_EQ(offered & (kCsum | kMac | kMrgRxbuf), kCsum | kMac | kMrgRxbuf);
    uint8_t seen[6];
    for (uint32_t i = 0; i < 6; ++i) seen[i] = static_cast<uint8_t>(driver.read_config(i, 1));
    EXPECT_EQ(std::memcmp(seen, mac, sizeof mac), 0) << "the config space's MAC";
  }
  kvmmio_transport_destroy(window);
  EXPECT_EQ(kvmmio_device_destroy(device), KVMMIO_OK) << kvmmio_last_error();

  expect_a_silent_backend_refused(vm, net, kvmmio_vhost_user_net_create);
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK) << kvmmio_last_error();
}

TEST_F(CApiKvmTest, RamFromTheEmbeddersFdIsMappedAndRegistered) {
  kvmmio_vm* vm = nullptr;
  ASSERT_EQ(kvmmio_vm_create(&vm), KVMMIO_OK) << kvmmio_last_error();
  const long page = ::sysconf(_SC_PAGESIZE);
  UniqueFd fd(::memfd_create("c-embedder-ram", MFD_CLOEXEC));
  ASSERT_EQ(::ftruncate(fd.get(), 3 * page), 0);
  EXPECT_EQ(kvmmio_vm_add_ram_fd(vm, 0x40000000, 2 * page, fd.get(), page, KVMMIO_RAM_REGISTER_MEMSLOT), KVMMIO_OK)
      << kvmmio_last_error();
  EXPECT_EQ(kvmmio_vm_add_ram_fd(vm, 0x40000000, page, fd.get(), 0, 0), KVMMIO_ERR_INVALID) << "overlap";
  EXPECT_EQ(kvmmio_vm_add_ram_fd(vm, 0x50000000, page, fd.get(), 0, 0x10), KVMMIO_ERR_INVALID) << "unknown flag";
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK);
}

}  // namespace
}  // namespace kvmmio::test
