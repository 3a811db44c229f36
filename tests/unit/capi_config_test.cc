// SPDX-License-Identifier: BSD-2-Clause
// The C API's typed configs without KVM (capi/configs.h): each struct read
// by its size (below its first version and above this library's refused,
// an older, shorter struct's later fields given their defaults), each enum
// and number out of range refused with a message naming the field and no
// command-line option, a NULL transport config keeping the device's
// defaults; and the block and console devices made from configs, on a
// temporary image (read-only and not) and on pipes, driven through a
// transport as Linux drives them. The public kvmmio_*_create() functions
// check a config before their handles, so its mistakes come back from them
// with no VM here too. With KVM: tests/kvm/capi_kvm_test.cc.
#include "capi/configs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>

#include "../block/block_machine.h"
#include "../virtio/driver_ring.h"
#include "../virtio/mmio_driver.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/kvmmio.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::capi {
namespace {

using block::test::BlockMachine;
using block::test::TempDir;
using virtio::test::Buffer;
using virtio::test::DriverRing;
using virtio::test::MmioDriver;

// The message of the ArgumentError `f` throws ("" when it throws none).
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const ArgumentError& e) {
    return e.what();
  }
  return "";
}

// Each config at its initializer, with its required fields given.
kvmmio_transport_config transport_config() { return KVMMIO_TRANSPORT_CONFIG_INIT; }
kvmmio_net_config net_config() {
  kvmmio_net_config c = KVMMIO_NET_CONFIG_INIT;
  c.tap = "kvt0";
  return c;
}
kvmmio_blk_config blk_config() {
  kvmmio_blk_config c = KVMMIO_BLK_CONFIG_INIT;
  c.path = "disk.img";
  return c;
}
kvmmio_fs_config fs_config_of(int socket_fd) {
  kvmmio_fs_config c = KVMMIO_FS_CONFIG_INIT;
  c.tag = "share";
  c.socket_fd = socket_fd;
  return c;
}
kvmmio_vhost_user_net_config vhost_user_net_config_of(int socket_fd) {
  kvmmio_vhost_user_net_config c = KVMMIO_VHOST_USER_NET_CONFIG_INIT;
  c.socket_fd = socket_fd;
  const uint8_t mac[6] = {0x02, 0x6b, 0x76, 0, 0, 0x0a};
  std::memcpy(c.mac, mac, sizeof mac);
  return c;
}
kvmmio_console_config console_config(int output_fd) {
  kvmmio_console_config c = KVMMIO_CONSOLE_CONFIG_INIT;
  c.output_fd = output_fd;
  return c;
}

void read(const kvmmio_transport_config& c) { transport_options(&c, {}); }
void read(const kvmmio_net_config& c) { net_options(&c); }
void read(const kvmmio_blk_config& c) { block_options(&c); }
void read(const kvmmio_console_config& c) { console_options(&c); }
void read(const kvmmio_fs_config& c) { fs_config(&c); }
void read(const kvmmio_vhost_user_net_config& c) { vhost_user_net_config(&c); }

// What reading `config` refuses with once `change` has changed it.
template <typename Config, typename Change>
std::string refused(Config config, Change change) {
  change(config);
  return refusal([&] { read(config); });
}

// The message starts with `field` and names no command-line option.
testing::AssertionResult Names(const std::string& message, const std::string& field) {
  if (message.rfind(field, 0) != 0) return testing::AssertionFailure() << "not about " << field << ": " << message;
  if (message.find("--") != std::string::npos)
    return testing::AssertionFailure() << "names a command-line option: " << message;
  return testing::AssertionSuccess();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---- Sizes -------------------------------------------------------------------

TEST(CApiConfigSize, EachConfigRefusesASizeBelowItsFirstVersionOrAboveThisLibrarys) {
  kvmmio_transport_config transport = transport_config();
  kvmmio_net_config net = net_config();
  kvmmio_blk_config blk = blk_config();
  kvmmio_console_config console = console_config(STDOUT_FILENO);
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const UniqueFd near(pair[0]), far(pair[1]);
  kvmmio_fs_config fs = fs_config_of(near.get());
  kvmmio_vhost_user_net_config user_net = vhost_user_net_config_of(near.get());
  struct Case {
    const char* type;
    size_t& size;
    size_t first_version;  // up to its last field
    size_t known;          // its sizeof
    std::function<void()> read;
  };
  const Case cases[] = {
      {"kvmmio_transport_config", transport.size, kTransportConfigV1, sizeof transport, [&] { read(transport); }},
      {"kvmmio_net_config", net.size, kNetConfigV1, sizeof net, [&] { read(net); }},
      {"kvmmio_blk_config", blk.size, kBlkConfigV1, sizeof blk, [&] { read(blk); }},
      {"kvmmio_console_config", console.size, kConsoleConfigV1, sizeof console, [&] { read(console); }},
      {"kvmmio_fs_config", fs.size, kFsConfigV1, sizeof fs, [&] { read(fs); }},
      {"kvmmio_vhost_user_net_config", user_net.size, kVhostUserNetConfigV1, sizeof user_net,
       [&] { read(user_net); }},
  };
  for (const Case& c : cases) {
    const std::string size = std::string(c.type) + ".size";
    c.size = c.known;
    EXPECT_EQ(refusal(c.read), "") << c.type;
    c.size = c.first_version;  // without the tail padding
    EXPECT_EQ(refusal(c.read), "") << c.type;
    c.size = 0;
    EXPECT_TRUE(Names(refusal(c.read), size + " is 0, smaller than any " + c.type));
    c.size = sizeof(size_t);
    EXPECT_TRUE(Names(refusal(c.read), size + " is 8, smaller than any " + c.type));
    c.size = c.first_version - 1;
    EXPECT_TRUE(contains(refusal(c.read), "set it to sizeof(" + std::string(c.type) + ")")) << c.type;
    // A program built against a newer header than this library.
    c.size = c.known + 8;
    const std::string bigger = refusal(c.read);
    EXPECT_TRUE(Names(bigger, size + " is " + std::to_string(c.known + 8) + ", larger than this library's"));
    EXPECT_TRUE(contains(bigger, "newer kvmmio.h than libkvmmio " KVMMIO_VERSION_STRING)) << bigger;
    c.size = c.known;
  }
  EXPECT_TRUE(Names(refusal([] { net_options(nullptr); }), "kvmmio_net_config is NULL"));
  EXPECT_TRUE(Names(refusal([] { block_options(nullptr); }), "kvmmio_blk_config is NULL"));
  EXPECT_TRUE(Names(refusal([] { console_options(nullptr); }), "kvmmio_console_config is NULL"));
  EXPECT_TRUE(Names(refusal([] { capi::fs_config(nullptr); }), "kvmmio_fs_config is NULL"));
}

// A program built against an older kvmmio.h, whose struct ended earlier:
// simulated with a first version that covers only the first fields. The
// fields it lacks take their defaults, whatever the bytes past its size.
TEST(CApiConfigSize, AnOlderShorterStructGivesTheLaterFieldsTheirDefaults) {
  kvmmio_transport_config transport_defaults = KVMMIO_TRANSPORT_CONFIG_INIT;
  kvmmio_transport_config transport = KVMMIO_TRANSPORT_CONFIG_INIT;
  transport.version = 1;
  transport.notify = KVMMIO_NOTIFY_TRAP;
  transport.regs = KVMMIO_REGS_TRAP;
  transport.event_idx = KVMMIO_EVENT_IDX_OFF;
  constexpr size_t kUpToVersion = offsetof(kvmmio_transport_config, version) + sizeof(uint32_t);
  kvmmio_transport_config t = widened(&transport, kUpToVersion, "kvmmio_transport_config.size",
                                      "kvmmio_transport_config", kUpToVersion, transport_defaults);
  EXPECT_EQ(t.version, 1u);
  EXPECT_EQ(t.notify, KVMMIO_NOTIFY_DEFAULT);
  EXPECT_EQ(t.regs, KVMMIO_REGS_DEFAULT);
  t.size = sizeof t;  // as this library reads the widened struct
  const virtio::TransportOptions o = transport_options(&t, {});
  EXPECT_EQ(o.version, virtio::kVersionLegacy);
  EXPECT_EQ(o.notify, virtio::NotifyMode::kIoEventFd);
  EXPECT_EQ(o.regs, virtio::RegsMode::kMirror);
  EXPECT_TRUE(o.event_idx);

  kvmmio_net_config net = KVMMIO_NET_CONFIG_INIT;
  net.tap = "kvt0";
  net.vhost = KVMMIO_VHOST_OFF;
  net.queue_pairs = 4;
  net.mtu = 9000;
  net.mac[0] = 0x02;
  net.bridge = "br0";
  constexpr size_t kUpToTap = offsetof(kvmmio_net_config, tap) + sizeof(const char*);
  kvmmio_net_config n = widened(&net, kUpToTap, "kvmmio_net_config.size", "kvmmio_net_config", kUpToTap);
  n.size = sizeof n;
  const net::NetOptions no = net_options(&n);
  EXPECT_EQ(no.tap, "kvt0");
  EXPECT_EQ(no.vhost, net::VhostMode::kAuto);
  EXPECT_EQ(no.queue_pairs, 1);
  EXPECT_EQ(no.mtu, 0);
  EXPECT_FALSE(no.mac) << "derived from the tap's name";
  EXPECT_TRUE(no.bridge.empty());

  kvmmio_blk_config blk = KVMMIO_BLK_CONFIG_INIT;
  blk.path = "disk.img";
  blk.read_only = 1;
  blk.serial = "older";
  blk.engine = KVMMIO_BLK_ENGINE_THREADS;
  blk.queues = 4;
  constexpr size_t kUpToReadOnly = offsetof(kvmmio_blk_config, read_only) + sizeof(int);
  kvmmio_blk_config b = widened(&blk, kUpToReadOnly, "kvmmio_blk_config.size", "kvmmio_blk_config", kUpToReadOnly);
  b.size = sizeof b;
  const BlockOptions bo = block_options(&b);
  EXPECT_EQ(bo.disk.path, "disk.img");
  EXPECT_TRUE(bo.disk.read_only);
  EXPECT_TRUE(bo.disk.serial.empty());
  EXPECT_EQ(bo.device.engine, block::EngineChoice::kDefault);
  EXPECT_EQ(bo.device.queues, 1u);

  int flag = 0;
  kvmmio_console_config console = KVMMIO_CONSOLE_CONFIG_INIT;
  console.output_fd = STDOUT_FILENO;
  console.input_space = [](void* o) { ++*static_cast<int*>(o); };
  console.input_opaque = &flag;
  constexpr size_t kUpToFd = offsetof(kvmmio_console_config, output_fd) + sizeof(int);
  kvmmio_console_config c =
      widened(&console, kUpToFd, "kvmmio_console_config.size", "kvmmio_console_config", kUpToFd);
  c.size = sizeof c;
  const ConsoleOptions co = console_options(&c);
  EXPECT_EQ(co.output_fd, STDOUT_FILENO);
  EXPECT_EQ(co.input_space, nullptr);
  EXPECT_EQ(co.input_opaque, nullptr);
}

// The device ops of a callback device follow the same rule (ops_size).
TEST(CApiConfigSize, DeviceOpsTakeTheSameRule) {
  const kvmmio_device_ops ops{};
  EXPECT_TRUE(Names(refusal([&] {
                      widened(&ops, 8, "ops_size", "kvmmio_device_ops",
                              offsetof(kvmmio_device_ops, queue_notify) + sizeof(void*));
                    }),
                    "ops_size is 8, smaller than any kvmmio_device_ops"));
  kvmmio_device* device = nullptr;
  EXPECT_EQ(kvmmio_device_create(nullptr, &ops, sizeof ops + 8, nullptr, &device), KVMMIO_ERR_INVALID);
  EXPECT_TRUE(contains(kvmmio_last_error(), "kvmmio_device_create: ops_size is")) << kvmmio_last_error();
}

// ---- Fields --------------------------------------------------------------------

TEST(CApiConfigFields, EachEnumOutOfRangeIsRefusedNamingTheField) {
  EXPECT_TRUE(Names(refused(transport_config(), [](auto& c) { c.version = 3; }),
                    "kvmmio_transport_config.version: 3 is none of 0 (the default), 1 (legacy), 2 (modern)"));
  EXPECT_TRUE(Names(refused(transport_config(), [](auto& c) { c.notify = static_cast<kvmmio_notify>(3); }),
                    "kvmmio_transport_config.notify: 3 is none of KVMMIO_NOTIFY_DEFAULT, KVMMIO_NOTIFY_IOEVENTFD, "
                    "KVMMIO_NOTIFY_TRAP"));
  // -1 in an enum whose type is unsigned int.
  EXPECT_TRUE(Names(refused(transport_config(), [](auto& c) { c.irq = static_cast<kvmmio_irq>(-1); }),
                    "kvmmio_transport_config.irq: 4294967295 is none of"));
  EXPECT_TRUE(Names(refused(transport_config(), [](auto& c) { c.regs = static_cast<kvmmio_regs>(3); }),
                    "kvmmio_transport_config.regs: 3 is none of"));
  EXPECT_TRUE(Names(refused(transport_config(), [](auto& c) { c.event_idx = static_cast<kvmmio_event_idx>(3); }),
                    "kvmmio_transport_config.event_idx: 3 is none of"));
  EXPECT_TRUE(Names(refused(net_config(), [](auto& c) { c.vhost = static_cast<kvmmio_vhost>(3); }),
                    "kvmmio_net_config.vhost: 3 is none of KVMMIO_VHOST_AUTO, KVMMIO_VHOST_ON, KVMMIO_VHOST_OFF"));
  // A net device's transport defaults.
  kvmmio_transport_config t = transport_config();
  t.regs = static_cast<kvmmio_regs>(9);
  EXPECT_TRUE(Names(refused(net_config(), [&](auto& c) { c.transport = &t; }),
                    "kvmmio_transport_config.regs: 9 is none of"));
  EXPECT_TRUE(Names(refused(blk_config(), [](auto& c) { c.cache = static_cast<kvmmio_blk_cache>(2); }),
                    "kvmmio_blk_config.cache: 2 is none of KVMMIO_BLK_CACHE_WRITEBACK, KVMMIO_BLK_CACHE_NONE"));
  EXPECT_TRUE(Names(refused(blk_config(), [](auto& c) { c.engine = static_cast<kvmmio_blk_engine>(3); }),
                    "kvmmio_blk_config.engine: 3 is none of KVMMIO_BLK_ENGINE_AUTO, KVMMIO_BLK_ENGINE_IO_URING, "
                    "KVMMIO_BLK_ENGINE_THREADS"));
}

TEST(CApiConfigFields, NumbersNamesAndFdsOutOfRangeAreRefusedNamingTheField) {
  const auto net = [](auto change) { return refused(net_config(), change); };
  EXPECT_TRUE(Names(net([](auto& c) { c.tap = nullptr; }), "kvmmio_net_config.tap is NULL"));
  EXPECT_TRUE(Names(net([](auto& c) { c.tap = ""; }), "kvmmio_net_config.tap \"\": an interface name is 1 to 15"));
  EXPECT_TRUE(Names(net([](auto& c) { c.tap = "a/b"; }), "kvmmio_net_config.tap \"a/b\": an interface name has no"));
  EXPECT_TRUE(Names(net([](auto& c) { c.tap = "a-very-long-tap-name"; }), "kvmmio_net_config.tap"));
  EXPECT_TRUE(Names(net([](auto& c) { c.queue_pairs = 17; }), "kvmmio_net_config.queue_pairs: 17: give 1 to 16, or 0"));
  EXPECT_TRUE(Names(net([](auto& c) { c.mtu = 67; }), "kvmmio_net_config.mtu: 67: give 68 to 65535, or 0"));
  EXPECT_TRUE(Names(net([](auto& c) { c.mac[0] = 0x03; }), "kvmmio_net_config.mac 03:00:00:00:00:00: a multicast"));
  EXPECT_TRUE(Names(net([](auto& c) { c.bridge = "br:0"; }), "kvmmio_net_config.bridge \"br:0\""));
  EXPECT_TRUE(Names(net([](auto& c) { c.poll_us = 10001; }), "kvmmio_net_config.poll_us: 10001: give 0 to 10000"));
  EXPECT_TRUE(Names(net([](auto& c) {
                      c.poll_us = 50;
                      c.vhost = KVMMIO_VHOST_OFF;
                    }),
                    "kvmmio_net_config.poll_us: vhost-net's busy polling"));

  const auto blk = [](auto change) { return refused(blk_config(), change); };
  EXPECT_TRUE(Names(blk([](auto& c) { c.path = nullptr; }), "kvmmio_blk_config.path is NULL or empty"));
  EXPECT_TRUE(Names(blk([](auto& c) { c.path = ""; }), "kvmmio_blk_config.path is NULL or empty"));
  EXPECT_TRUE(Names(blk([](auto& c) { c.serial = ""; }), "kvmmio_blk_config.serial: give 1 to 20 bytes"));
  EXPECT_TRUE(Names(blk([](auto& c) { c.serial = "123456789012345678901"; }), "kvmmio_blk_config.serial"));
  EXPECT_TRUE(Names(blk([](auto& c) { c.queues = 17; }), "kvmmio_blk_config.queues: 17: give 1 to 16, or 0"));
  EXPECT_EQ(blk([](auto& c) { c.serial = "12345678901234567890"; }), "") << "20 bytes is GET_ID's most";

  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  const UniqueFd rd(fds[0]);
  ::close(fds[1]);  // a number no fd has now
  const auto console = [](int fd) { return refused(console_config(fd), [](auto&) {}); };
  EXPECT_TRUE(Names(console(-1), "kvmmio_console_config.output_fd -1: give the fd"));
  EXPECT_TRUE(Names(console(fds[1]), "kvmmio_console_config.output_fd " + std::to_string(fds[1]) + ": not an open fd"));
  EXPECT_TRUE(Names(console(rd.get()), "kvmmio_console_config.output_fd " + std::to_string(rd.get()) +
                                           ": open for reading only"));
}

TEST(CApiConfigFields, AVhostUserNetConfigNeedsAUnicastMacAndAConnectedUnixStreamSocket) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const UniqueFd near(pair[0]), far(pair[1]);
  kvmmio_vhost_user_net_config config = vhost_user_net_config_of(near.get());
  config.reply_timeout_ms = 30000;
  const VhostUserNetConfig good = vhost_user_net_config(&config);
  EXPECT_EQ(good.mac, (std::array<uint8_t, 6>{0x02, 0x6b, 0x76, 0, 0, 0x0a}));
  EXPECT_EQ(good.reply_timeout, std::chrono::milliseconds(30000));
  EXPECT_TRUE(good.socket);
  EXPECT_NE(good.socket.get(), near.get()) << "the device's own duplicate";
  const kvmmio_vhost_user_net_config defaults = vhost_user_net_config_of(near.get());
  EXPECT_EQ(vhost_user_net_config(&defaults).reply_timeout, std::chrono::milliseconds(2000));
  const auto net = [&](auto change) { return refused(vhost_user_net_config_of(near.get()), change); };
  EXPECT_TRUE(Names(net([](auto& c) { std::memset(c.mac, 0, sizeof c.mac); }),
                    "kvmmio_vhost_user_net_config.mac is all zero: give the guest's unicast MAC"));
  EXPECT_TRUE(Names(net([](auto& c) { c.mac[0] = 0x01; }),
                    "kvmmio_vhost_user_net_config.mac 01:6b:76:00:00:0a: a multicast address"));
  EXPECT_TRUE(Names(net([](auto& c) { c.reply_timeout_ms = 60001; }),
                    "kvmmio_vhost_user_net_config.reply_timeout_ms: 60001: give 1 to 60000, or 0"));
  EXPECT_TRUE(Names(net([](auto& c) { c.socket_fd = -1; }),
                    "kvmmio_vhost_user_net_config.socket_fd -1: give a unix stream socket connected to the backend"));
  int dgram[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, dgram), 0);
  const UniqueFd d0(dgram[0]), d1(dgram[1]);
  EXPECT_TRUE(Names(net([&](auto& c) { c.socket_fd = d0.get(); }),
                    "kvmmio_vhost_user_net_config.socket_fd " + std::to_string(d0.get()) + ": not a unix stream socket"));
  EXPECT_TRUE(Names(refusal([] { capi::vhost_user_net_config(nullptr); }), "kvmmio_vhost_user_net_config is NULL"));
}

TEST(CApiConfigFields, AnFsConfigNeedsATagTheGuestCanMountAndAConnectedUnixStreamSocket) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const UniqueFd near(pair[0]), far(pair[1]);
  const auto fs = [&](auto change) { return refused(fs_config_of(near.get()), change); };
  EXPECT_TRUE(Names(fs([](auto& c) { c.tag = nullptr; }), "kvmmio_fs_config.tag is NULL"));
  EXPECT_TRUE(Names(fs([](auto& c) { c.tag = ""; }), "kvmmio_fs_config.tag \"\": the tag must be 1 to 36 bytes"));
  EXPECT_TRUE(Names(fs([](auto& c) { c.tag = "a b"; }), "kvmmio_fs_config.tag \"a b\": the tag 'a b' has a space"));
  EXPECT_TRUE(Names(fs([](auto& c) { c.reply_timeout_ms = 60001; }),
                    "kvmmio_fs_config.reply_timeout_ms: 60001: give 1 to 60000, or 0"));
  EXPECT_TRUE(Names(fs([](auto& c) { c.socket_fd = -1; }), "kvmmio_fs_config.socket_fd -1: give a unix stream"));
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  const UniqueFd rd(fds[0]);
  ::close(fds[1]);  // a number no fd has now
  EXPECT_TRUE(Names(fs([&](auto& c) { c.socket_fd = fds[1]; }),
                    "kvmmio_fs_config.socket_fd " + std::to_string(fds[1]) + ": not an open fd"));
  EXPECT_TRUE(Names(fs([&](auto& c) { c.socket_fd = rd.get(); }),
                    "kvmmio_fs_config.socket_fd " + std::to_string(rd.get()) + ": not a unix stream socket"));
  int dgram[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, dgram), 0);
  const UniqueFd d0(dgram[0]), d1(dgram[1]);
  EXPECT_TRUE(Names(fs([&](auto& c) { c.socket_fd = d0.get(); }),
                    "kvmmio_fs_config.socket_fd " + std::to_string(d0.get()) + ": not a unix stream socket"));
  // A good one: its own duplicate of the socket, the timeout's default.
  const kvmmio_fs_config good = fs_config_of(near.get());
  const FsConfig taken = capi::fs_config(&good);
  EXPECT_EQ(taken.tag, "share");
  EXPECT_TRUE(taken.socket);
  EXPECT_NE(taken.socket.get(), near.get());
  EXPECT_EQ(taken.reply_timeout.count(), 2000);
}

TEST(CApiConfigFields, ANullTransportConfigKeepsTheDevicesDefaults) {
  const virtio::TransportOptions library;
  const virtio::TransportOptions none = transport_options(nullptr, {});
  EXPECT_EQ(none.version, library.version);
  EXPECT_EQ(none.notify, virtio::NotifyMode::kIoEventFd);
  EXPECT_EQ(none.irq, virtio::IrqMode::kIrqFd);
  EXPECT_EQ(none.regs, virtio::RegsMode::kMirror);
  EXPECT_TRUE(none.event_idx);

  // A net device's transport defaults: NULL and an all-default config keep
  // them; a field set overrides its own.
  kvmmio_transport_config net_transport = KVMMIO_TRANSPORT_CONFIG_INIT;
  net_transport.version = 1;
  net_transport.irq = KVMMIO_IRQ_RELAY;
  net_transport.event_idx = KVMMIO_EVENT_IDX_OFF;
  kvmmio_net_config net = KVMMIO_NET_CONFIG_INIT;
  net.tap = "kvt0";
  net.transport = &net_transport;
  const virtio::TransportOptions device = net_options(&net).transport;
  EXPECT_EQ(device.version, virtio::kVersionLegacy);
  EXPECT_EQ(device.irq, virtio::IrqMode::kRelay);
  EXPECT_FALSE(device.event_idx);
  EXPECT_EQ(device.regs, virtio::RegsMode::kMirror);
  const kvmmio_transport_config all_default = KVMMIO_TRANSPORT_CONFIG_INIT;
  for (const kvmmio_transport_config* keep : {static_cast<const kvmmio_transport_config*>(nullptr), &all_default}) {
    const virtio::TransportOptions o = transport_options(keep, device);
    EXPECT_EQ(o.version, virtio::kVersionLegacy);
    EXPECT_EQ(o.irq, virtio::IrqMode::kRelay);
    EXPECT_FALSE(o.event_idx);
    EXPECT_EQ(o.regs, virtio::RegsMode::kMirror);
  }
  kvmmio_transport_config some = KVMMIO_TRANSPORT_CONFIG_INIT;
  some.version = 2;
  some.regs = KVMMIO_REGS_TRAP;
  some.event_idx = KVMMIO_EVENT_IDX_ON;
  const virtio::TransportOptions o = transport_options(&some, device);
  EXPECT_EQ(o.version, virtio::kVersionModern);
  EXPECT_EQ(o.regs, virtio::RegsMode::kTrap);
  EXPECT_TRUE(o.event_idx);
  EXPECT_EQ(o.irq, virtio::IrqMode::kRelay) << "not set: the device's";
  EXPECT_EQ(o.notify, virtio::NotifyMode::kIoEventFd);
}

TEST(CApiConfigFields, ANetConfigBecomesTheDevicesOptions) {
  kvmmio_net_config c = KVMMIO_NET_CONFIG_INIT;
  c.tap = "kvt0";
  c.vhost = KVMMIO_VHOST_ON;
  c.queue_pairs = 4;
  c.mtu = 9000;
  const uint8_t mac[6] = {0x02, 0x6b, 0x76, 0x00, 0x00, 0x01};
  std::memcpy(c.mac, mac, sizeof mac);
  c.bridge = "br0";
  c.poll_us = 50;
  const net::NetOptions o = net_options(&c);
  EXPECT_EQ(o.tap, "kvt0");
  EXPECT_EQ(o.vhost, net::VhostMode::kOn);
  EXPECT_EQ(o.queue_pairs, 4);
  EXPECT_EQ(o.mtu, 9000);
  ASSERT_TRUE(o.mac);
  EXPECT_EQ(*o.mac, std::to_array(mac));
  EXPECT_EQ(o.bridge, "br0");
  EXPECT_EQ(o.poll_us, 50u);
  // Its messages speak of kvmmio_net_config's fields.
  ASSERT_TRUE(o.words);
  EXPECT_EQ(o.words->named("net", {"tap", "kvt0"}, {"bridge", "br0"}), "kvmmio_net_config.bridge br0 (tap kvt0)");
  EXPECT_EQ(o.words->ask("net", {"tap", "kvt0"}, {"bridge", "br1"}), "set kvmmio_net_config.bridge to br1");
}

// ---- The public functions, without a VM -----------------------------------------

TEST(CApiConfigFields, ThePublicFunctionsCheckTheConfigBeforeTheHandles) {
  kvmmio_device* device = nullptr;
  kvmmio_net_config net = KVMMIO_NET_CONFIG_INIT;
  net.tap = "kvt0";
  net.mtu = 20;
  EXPECT_EQ(kvmmio_net_create(nullptr, &net, &device), KVMMIO_ERR_INVALID);
  EXPECT_STREQ(kvmmio_last_error(),
               "kvmmio_net_create: kvmmio_net_config.mtu: 20: give 68 to 65535, or 0 for none offered");
  net.mtu = 0;
  EXPECT_EQ(kvmmio_net_create(nullptr, &net, &device), KVMMIO_ERR_INVALID);
  EXPECT_STREQ(kvmmio_last_error(), "kvmmio_net_create: vm is NULL");
  kvmmio_blk_config blk = KVMMIO_BLK_CONFIG_INIT;
  blk.size = 4;
  EXPECT_EQ(kvmmio_blk_create(nullptr, &blk, &device), KVMMIO_ERR_INVALID);
  EXPECT_TRUE(contains(kvmmio_last_error(), "kvmmio_blk_create: kvmmio_blk_config.size is 4")) << kvmmio_last_error();
  EXPECT_EQ(kvmmio_blk_create(nullptr, nullptr, &device), KVMMIO_ERR_INVALID);
  EXPECT_STREQ(kvmmio_last_error(), "kvmmio_blk_create: kvmmio_blk_config is NULL");
  const kvmmio_console_config console = KVMMIO_CONSOLE_CONFIG_INIT;
  EXPECT_EQ(kvmmio_console_create(nullptr, &console, &device), KVMMIO_ERR_INVALID);
  EXPECT_TRUE(contains(kvmmio_last_error(), "kvmmio_console_create: kvmmio_console_config.output_fd -1"))
      << kvmmio_last_error();
  const kvmmio_vhost_user_net_config user_net = KVMMIO_VHOST_USER_NET_CONFIG_INIT;
  EXPECT_EQ(kvmmio_vhost_user_net_create(nullptr, &user_net, &device), KVMMIO_ERR_INVALID);
  EXPECT_STREQ(kvmmio_last_error(),
               "kvmmio_vhost_user_net_create: kvmmio_vhost_user_net_config.mac is all zero: give the guest's "
               "unicast MAC");
  EXPECT_EQ(device, nullptr);
  size_t taken = 7;
  EXPECT_EQ(kvmmio_console_input(nullptr, "x", 1, &taken), KVMMIO_ERR_INVALID);
  EXPECT_EQ(taken, 0u);

  kvmmio_transport* transport = nullptr;
  kvmmio_transport_config t = KVMMIO_TRANSPORT_CONFIG_INIT;
  t.notify = static_cast<kvmmio_notify>(5);
  EXPECT_EQ(kvmmio_transport_create(nullptr, nullptr, 0, 0, &t, &transport), KVMMIO_ERR_INVALID);
  EXPECT_TRUE(contains(kvmmio_last_error(), "kvmmio_transport_create: kvmmio_transport_config.notify: 5"))
      << kvmmio_last_error();
  EXPECT_EQ(kvmmio_transport_create(nullptr, nullptr, 0, 0, nullptr, &transport), KVMMIO_ERR_INVALID);
  EXPECT_STREQ(kvmmio_last_error(), "kvmmio_transport_create: device is NULL");
}

// ---- The block device from a config, on a temporary image -----------------------

struct BlkConfigTest : testing::Test {
  BlockOptions options(bool read_only) {
    kvmmio_blk_config c = KVMMIO_BLK_CONFIG_INIT;
    c.path = image.c_str();
    c.read_only = read_only;
    c.serial = "capi-disk";
    c.engine = KVMMIO_BLK_ENGINE_THREADS;
    return block_options(&c);
  }
  TempDir dir;
  std::string image = dir.image("disk.img", 1 << 20);
};

TEST_F(BlkConfigTest, AReadWriteImageTakesTheGuestsWrites) {
  BlockMachine m(options(false).disk, options(false).device);
  const uint64_t features = m.bring_up();
  EXPECT_FALSE(features & (uint64_t{1} << block::spec::kFRo));
  EXPECT_STREQ(m.device->engine_name(), "threads");
  const std::vector<uint8_t> bytes(4096, 0x5a);
  m.memory.write(BlockMachine::data_at(0), bytes.data(), bytes.size());
  m.request(0, block::spec::kTOut, 8, 4096, false);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), block::spec::kSOk);
  EXPECT_EQ(block::test::file_bytes(image, 8 * 512, 4096), bytes);
}

TEST_F(BlkConfigTest, AReadOnlyImageOffersRoAndRefusesWrites) {
  BlockMachine m(options(true).disk, options(true).device);
  const uint64_t features = m.bring_up();
  EXPECT_TRUE(features & (uint64_t{1} << block::spec::kFRo));
  EXPECT_EQ(m.device->settings().read_only, 1u);
  m.request(0, block::spec::kTIn, 0, 4096, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), block::spec::kSOk);
  EXPECT_EQ(m.guest(BlockMachine::data_at(0), 4096), block::test::file_bytes(image, 0, 4096));
  m.request(1, block::spec::kTOut, 0, 4096, false);
  ASSERT_TRUE(m.used());
  EXPECT_NE(m.status(1), block::spec::kSOk);
  EXPECT_EQ(block::test::file_bytes(image, 0, 4096), m.guest(BlockMachine::data_at(0), 4096)) << "unchanged";
}

// make_block() opens the image: what is wrong with it is said in the C
// API's words, never --disk's.
TEST_F(BlkConfigTest, AnImageThatCannotBeUsedIsAUserErrorInTheConfigsWords) {
  GuestMemory memory;
  EventLoop loop;
  const auto made = make_block(options(false), memory, loop);
  EXPECT_EQ(made->settings().capacity_sectors, (1u << 20) / 512);
  const auto why = [&](const BlockOptions& o) {
    try {
      make_block(o, memory, loop);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // The image is in use (locked) by `made`.
  const std::string in_use = why(options(false));
  EXPECT_TRUE(Names(in_use, "kvmmio_blk_config.path " + image + ": the image is in use"));
  EXPECT_TRUE(contains(in_use, "set kvmmio_blk_config.read_only = 1")) << in_use;
  BlockOptions missing = options(false);
  missing.disk.path = dir.path + "/none.img";
  EXPECT_TRUE(Names(why(missing), "kvmmio_blk_config.path " + missing.disk.path + ": no such file"));
  BlockOptions directory = options(false);
  directory.disk.path = dir.path;
  EXPECT_TRUE(Names(why(directory), "kvmmio_blk_config.path " + dir.path + ": "));
}

// ---- The console device from a config, on pipes ------------------------------------

TEST(CApiConsoleConfig, TheGuestsOutputReachesTheFdAndWaitingInputIsAskedFor) {
  constexpr uint64_t kRam = 0x40000000, kRxRing = kRam + 0x10000, kTxRing = kRam + 0x20000;
  constexpr uint64_t kRxBuffer = kRam + 0x100000, kTxBuffer = kRam + 0x200000;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  const UniqueFd rd(fds[0]), wr(fds[1]);
  std::atomic<int> asked{0};
  kvmmio_console_config c = KVMMIO_CONSOLE_CONFIG_INIT;
  c.output_fd = wr.get();
  c.input_space = [](void* o) { ++*static_cast<std::atomic<int>*>(o); };
  c.input_opaque = &asked;

  GuestMemory memory;
  memory.add_ram(kRam, 4 << 20);
  EventLoop loop;
  EventFd irq;
  auto device = make_console(console_options(&c), memory, loop);
  EXPECT_EQ(device->receive({reinterpret_cast<const uint8_t*>("hi"), 2}), 0u) << "no driver yet";
  virtio::MmioTransport transport(
      *device, virtio::TransportEnv{.memory = memory, .irq = irq, .base = 0x0a000000, .loop = &loop, .name = "console"},
      virtio::TransportOptions{.notify = virtio::NotifyMode::kTrap, .regs = virtio::RegsMode::kTrap});
  MmioDriver driver(transport);
  ASSERT_TRUE(driver.probe());
  EXPECT_EQ(driver.device_id(), 3u);
  ASSERT_TRUE(driver.initialize(virtio::feature::bit(virtio::feature::kVersion1)));
  const auto rx_layout = driver.setup_queue(console::VirtioConsole::kReceiveQueue, kRxRing, 16);
  const auto tx_layout = driver.setup_queue(console::VirtioConsole::kTransmitQueue, kTxRing, 16);
  ASSERT_TRUE(rx_layout && tx_layout);
  DriverRing rx(memory, *rx_layout), tx(memory, *tx_layout);
  const Buffer rx_buffer[] = {{kRxBuffer, 64, true}};
  rx.add(rx_buffer);
  rx.publish();
  driver.driver_ok();  // the RX notify that follows asks for the input refused before
  EXPECT_EQ(asked.load(), 1);
  EXPECT_EQ(device->receive({reinterpret_cast<const uint8_t*>("hi"), 2}), 2u);

  memory.write(kTxBuffer, "hello", 5);
  const Buffer tx_buffer[] = {{kTxBuffer, 5, false}};
  tx.add(tx_buffer);
  tx.publish();
  driver.notify(console::VirtioConsole::kTransmitQueue);
  char got[16] = {};
  pollfd p{rd.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  EXPECT_EQ(::read(rd.get(), got, sizeof got), 5);
  EXPECT_STREQ(got, "hello");
  driver.reset();
}

}  // namespace
}  // namespace kvmmio::capi
