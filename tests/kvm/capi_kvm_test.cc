// SPDX-License-Identifier: BSD-2-Clause
// The C API (kvmmio/kvmmio.h) on real /dev/kvm, as a C embedder uses it: it
// adopts a running machine's VM (the TestMachine plays the embedder: its
// VM, RAM, vCPU and interrupt controller), puts a device of C callbacks
// behind a transport with the register mirror, and hands the transport the
// window's exits. The guest's register loads read the mirror with no exit,
// a request raises an interrupt the guest takes through the GIC, and the
// handles go in the order the header asks for. Architecture-neutral: x86-64
// here, KVM/ARM in the nested arm64 platform.
#include <gtest/gtest.h>
#include <linux/kvm.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
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

namespace kvmmio::test {
namespace {

using namespace virtio::test;

constexpr uint32_t kGsi = 5;
constexpr uint32_t kFirstSlot = 8;  // the machine's own Vm uses slot 0 for its RAM
constexpr uint64_t kRing = 0x20000;  // offsets into the machine's RAM
constexpr uint64_t kIn = 0x30000;
constexpr uint64_t kOut = 0x31000;


// The C API on a TestMachine's VM, a Reverser behind a transport at the
// machine's device window.
struct CMachine {
  CMachine(Kvm& kvm, const char* options) : machine(kvm) {
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
  CMachine m(*kvm, "regs=mirror");
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
  CMachine m(*kvm, "regs=trap");
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
  ASSERT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, "regs=trap,version=1", &transport), KVMMIO_OK)
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
  EXPECT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, "regs=sometimes", &transport), KVMMIO_ERR_INVALID);
  EXPECT_NE(std::string(kvmmio_last_error()).find("regs"), std::string::npos) << kvmmio_last_error();
  ASSERT_EQ(kvmmio_transport_create(vm, device, 0x0a000000, kGsi, "regs=trap", &transport), KVMMIO_OK)
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
  EXPECT_EQ(kvmmio_net_create(vm, "tap=", 0, &net), KVMMIO_ERR_INVALID);
  EXPECT_NE(std::string(kvmmio_last_error()).find("tap"), std::string::npos) << kvmmio_last_error();
  kvmmio_transport_destroy(transport);
  EXPECT_EQ(kvmmio_device_destroy(device), KVMMIO_OK);
  EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK);
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
