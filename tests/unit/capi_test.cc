// SPDX-License-Identifier: BSD-2-Clause
// The C API without KVM: errors come back as statuses with the calling
// thread's message, never as exceptions; the log sink and level; and a
// device made of C callbacks (capi/callback_device.h) behind a real
// transport, driven as Linux drives virtio-mmio, its callbacks working the
// rings through kvmmio_queue_* and kvmmio_chain_*. The C API on real KVM:
// tests/kvm/capi_kvm_test.cc; its net device: tests/net/capi_net_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../virtio/driver_ring.h"
#include "../virtio/mmio_driver.h"
#include "../virtio/reverser_c_device.h"
#include "capi/callback_device.h"
#include "config.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/log.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/kvm.h"
#include "kvmmio/kvmmio.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::capi {
namespace {

using namespace virtio::test;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CApiErrors, ComeBackAsStatusesWithTheCallersMessage) {
  uint8_t data[4] = {};
  EXPECT_EQ(kvmmio_transport_mmio(nullptr, 0, data, 4, 0), KVMMIO_ERR_INVALID);
  EXPECT_EQ(std::string(kvmmio_last_error()), "kvmmio_transport_mmio: transport is NULL");
  EXPECT_EQ(kvmmio_set_log_level(9), KVMMIO_ERR_INVALID);
  EXPECT_TRUE(contains(kvmmio_last_error(), "kvmmio_set_log_level: level 9")) << kvmmio_last_error();
  EXPECT_EQ(kvmmio_vm_add_ram_host(nullptr, 0, 4096, nullptr, 0), KVMMIO_ERR_INVALID);
  EXPECT_EQ(kvmmio_vm_adopt(-1, 0, 0, 0x80, nullptr), KVMMIO_ERR_INVALID);
  EXPECT_TRUE(contains(kvmmio_last_error(), "unknown flags")) << kvmmio_last_error();
  // A success leaves the last failure's message alone.
  EXPECT_EQ(kvmmio_vm_destroy(nullptr), KVMMIO_OK);
  EXPECT_TRUE(contains(kvmmio_last_error(), "unknown flags"));
  // Each thread has its own message.
  std::thread([] {
    EXPECT_STREQ(kvmmio_last_error(), "");
    EXPECT_EQ(kvmmio_device_unlock(nullptr), KVMMIO_ERR_INVALID);
    EXPECT_TRUE(contains(kvmmio_last_error(), "kvmmio_device_unlock"));
  }).join();
  EXPECT_TRUE(contains(kvmmio_last_error(), "unknown flags"));
  EXPECT_STREQ(kvmmio_version(), PACKAGE_VERSION);
  EXPECT_EQ(kvmmio_transport_window_size(), virtio::kMmioWindowSize);
}

// kvmmio/version.h: the headers' version, the library's at run time, and
// the comparison an embedder's #if makes.
TEST(CApiVersion, TheHeadersMacrosAgreeWithTheLibrary) {
  EXPECT_STREQ(kvmmio_version(), KVMMIO_VERSION_STRING);
  EXPECT_EQ(std::to_string(KVMMIO_VERSION_MAJOR) + "." + std::to_string(KVMMIO_VERSION_MINOR) + "." +
                std::to_string(KVMMIO_VERSION_PATCH),
            KVMMIO_VERSION_STRING);
  static_assert(KVMMIO_VERSION_AT_LEAST(KVMMIO_VERSION_MAJOR, KVMMIO_VERSION_MINOR, KVMMIO_VERSION_PATCH));
  static_assert(KVMMIO_VERSION_AT_LEAST(0, 0, 0));
  static_assert(!KVMMIO_VERSION_AT_LEAST(KVMMIO_VERSION_MAJOR, KVMMIO_VERSION_MINOR, KVMMIO_VERSION_PATCH + 1));
  static_assert(!KVMMIO_VERSION_AT_LEAST(KVMMIO_VERSION_MAJOR, KVMMIO_VERSION_MINOR + 1, 0));
  static_assert(!KVMMIO_VERSION_AT_LEAST(KVMMIO_VERSION_MAJOR + 1, 0, 0));
  static_assert(KVMMIO_ABI >= 2, "the ABI of the typed configs");
}

// Without /dev/kvm the failure names the fix; with it a VM is made. Either
// way the answer is a status, not an exception.
TEST(CApiErrors, AVmWithoutKvmIsAUserErrorNamingTheFix) {
  kvmmio_vm* vm = nullptr;
  const kvmmio_status s = kvmmio_vm_create(&vm);
  if (Kvm::available()) {
    ASSERT_EQ(s, KVMMIO_OK) << kvmmio_last_error();
    EXPECT_GE(kvmmio_vm_fd(vm), 0);
    EXPECT_EQ(kvmmio_vm_destroy(vm), KVMMIO_OK);
  } else {
    EXPECT_EQ(s, KVMMIO_ERR_USER);
    EXPECT_EQ(vm, nullptr);
    EXPECT_TRUE(contains(kvmmio_last_error(), "kvmmio_vm_create: cannot open /dev/kvm")) << kvmmio_last_error();
  }
}

struct Logged {
  std::vector<std::pair<int, std::string>> lines;
};

TEST(CApiLog, TheSinkGetsEachMessageAtOrAboveTheLevel) {
  Logged logged;
  ASSERT_EQ(kvmmio_set_log_sink(
                [](void* opaque, int level, const char* message) {
                  static_cast<Logged*>(opaque)->lines.emplace_back(level, message);
                },
                &logged),
            KVMMIO_OK);
  KVMMIO_LOG_WARN("queue %u is %s", 3u, "stuck");
  ASSERT_EQ(kvmmio_set_log_level(KVMMIO_LOG_ERROR), KVMMIO_OK);
  KVMMIO_LOG_WARN("dropped below the level");
  KVMMIO_LOG_ERROR("kept");
  EXPECT_EQ(kvmmio_set_log_level(KVMMIO_LOG_INFO), KVMMIO_OK);
  EXPECT_EQ(kvmmio_set_log_sink(nullptr, nullptr), KVMMIO_OK);
  KVMMIO_LOG_WARN("to stderr, not to the sink");
  ASSERT_EQ(logged.lines.size(), 2u);
  EXPECT_EQ(logged.lines[0], std::make_pair(int{KVMMIO_LOG_WARN}, std::string("queue 3 is stuck")));
  EXPECT_EQ(logged.lines[1], std::make_pair(int{KVMMIO_LOG_ERROR}, std::string("kept")));
}

// ---- A device of callbacks behind a transport ---------------------------------

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRing = kRam + 0x10000;
constexpr uint64_t kIn = kRam + 0x100000;
constexpr uint64_t kOut = kIn + 0x1000;
constexpr uint32_t kDeviceId = Reverser::kDeviceId;
constexpr uint64_t kFeature = Reverser::kFeature;

// A CallbackDevice behind a transport, in test RAM, with Linux's driver.
struct CallbackMachine {
  explicit CallbackMachine(const kvmmio_device_ops& ops = reverser_ops())
      : device(memory, ops, &state),
        transport(device, virtio::TransportEnv{.memory = memory, .irq = irq, .base = 0x0a000000, .name = device.name()},
                  virtio::TransportOptions{.notify = virtio::NotifyMode::kTrap, .regs = virtio::RegsMode::kTrap}),
        driver(transport) {}

  static GuestMemory make_memory() {
    GuestMemory m;
    m.add_ram(kRam, 2 << 20);
    return m;
  }

  std::string request(DriverRing& ring, const std::string& text) {
    memory.write(kIn, text.data(), text.size());
    const Buffer chain[] = {{kIn, static_cast<uint32_t>(text.size()), false}, {kOut, 64, true}};
    ring.add(chain);
    ring.publish();
    driver.notify(0);
    auto used = ring.take_used();
    if (!used) return "<nothing used>";
    std::string out(used->len, '\0');
    memory.read(kOut, out.data(), out.size());
    return out;
  }

  // Members go in reverse: the driver, the transport, then its device.
  Reverser state;
  GuestMemory memory = make_memory();
  EventFd irq;
  CallbackDevice device;
  virtio::MmioTransport transport;
  MmioDriver driver;
};

TEST(CApiCallbackDevice, ServesRequestsThroughTheQueueFunctions) {
  CallbackMachine m;
  ASSERT_TRUE(m.driver.probe());
  EXPECT_EQ(m.driver.device_id(), kDeviceId);
  const auto features = m.driver.initialize(~uint64_t{0});
  ASSERT_TRUE(features);
  EXPECT_TRUE(*features & kFeature);
  const auto layout = m.driver.setup_queue(0, kRing, 64);
  ASSERT_TRUE(layout);
  DriverRing ring(m.memory, *layout);
  m.driver.driver_ok();
  EXPECT_EQ(m.state.activations, 1);
  EXPECT_EQ(m.state.features, *features);
  // Right after activate() the transport notifies each queue once, for
  // buffers made available before DRIVER_OK (virtio_device.h).
  EXPECT_EQ(m.state.notifies, 1);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(m.driver.read_config(i, 1), i + 1);

  EXPECT_EQ(m.request(ring, "kvmmio"), "oimmvk");
  EXPECT_EQ(m.request(ring, "a longer request, reversed"), "desrever ,tseuqer regnol a");
  EXPECT_EQ(m.state.notifies, 3);
  EXPECT_EQ(m.state.interrupts, 2);
  EXPECT_EQ(m.irq.take().value_or(0), 2u);
  EXPECT_EQ(m.transport.counters().guest_errors.load(), 0u);

  m.driver.reset();  // status 0: the device's reset callback, its queues gone
  EXPECT_EQ(m.state.resets, 1);
  EXPECT_EQ(m.device.queue(0), nullptr);
}

TEST(CApiCallbackDevice, ARefusedActivationNeedsAReset) {
  CallbackMachine m;
  m.state.refuse = true;
  ASSERT_TRUE(m.driver.probe());
  ASSERT_TRUE(m.driver.initialize(~uint64_t{0}));
  ASSERT_TRUE(m.driver.setup_queue(0, kRing, 64));
  m.driver.driver_ok();
  EXPECT_EQ(m.state.activations, 1);
  EXPECT_TRUE(m.driver.status() & virtio::status::kDeviceNeedsReset);
  EXPECT_EQ(m.device.queue(0), nullptr);
}

// A thread of the device's own uses its queue under the device's lock, as
// kvmmio_device_lock() gives it to C.
TEST(CApiCallbackDevice, AThreadOfTheDevicesOwnWorksTheQueueUnderTheLock) {
  kvmmio_device_ops ops = reverser_ops();
  ops.queue_notify = [](void* o, kvmmio_queue*) { ++static_cast<Reverser*>(o)->notifies; };  // leaves it
  CallbackMachine m(ops);
  ASSERT_TRUE(m.driver.probe());
  ASSERT_TRUE(m.driver.initialize(~uint64_t{0}));
  const auto layout = m.driver.setup_queue(0, kRing, 64);
  ASSERT_TRUE(layout);
  DriverRing ring(m.memory, *layout);
  m.driver.driver_ok();
  ASSERT_NE(m.device.lock(), nullptr);
  m.memory.write(kIn, "abc", 3);
  const Buffer chain[] = {{kIn, 3, false}, {kOut, 64, true}};
  ring.add(chain);
  ring.publish();
  m.driver.notify(0);
  EXPECT_FALSE(ring.take_used()) << "queue_notify left the request for the thread";
  std::thread([&] {
    auto guard = m.device.lock()->lock();
    kvmmio_queue* q = m.device.queue(0);
    ASSERT_NE(q, nullptr);
    reverse_requests(m.state, q);
  }).join();
  const auto used = ring.take_used();
  ASSERT_TRUE(used);
  std::string out(used->len, '\0');
  m.memory.read(kOut, out.data(), out.size());
  EXPECT_EQ(out, "cba");
  EXPECT_EQ(m.irq.take().value_or(0), 1u);
}

TEST(CApiCallbackDevice, RefusesOpsNoTransportCouldPresent) {
  GuestMemory memory;
  Reverser state;
  auto with = [](auto change) {
    kvmmio_device_ops ops = reverser_ops();
    change(ops);
    return ops;
  };
  EXPECT_THROW((void)CallbackDevice(memory, with([](auto& o) { o.queue_notify = nullptr; }), &state), std::invalid_argument);
  EXPECT_THROW((void)CallbackDevice(memory, with([](auto& o) { o.num_queues = 0; }), &state), std::invalid_argument);
  EXPECT_THROW((void)CallbackDevice(memory, with([](auto& o) { o.num_queues = 65; }), &state), std::invalid_argument);
  EXPECT_THROW((void)CallbackDevice(memory, with([](auto& o) { o.queue_max_size = 48; }), &state), std::invalid_argument);
  EXPECT_THROW((void)CallbackDevice(memory, with([](auto& o) { o.config_size = 257; }), &state), std::invalid_argument);
  EXPECT_EQ(CallbackDevice(memory, with([](auto& o) { o.name = nullptr; }), &state).name(), "c-device");
}

}  // namespace
}  // namespace kvmmio::capi
