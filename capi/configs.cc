// SPDX-License-Identifier: BSD-2-Clause
// The C API's configs as the library's options (capi/configs.h): read by
// size, every field checked and named in its mistakes.
#include "capi/configs.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <array>
#include <cctype>
#include <initializer_list>
#include <memory>
#include <utility>

#include "kvmmio/base/error.h"
#include "kvmmio/base/setting_words.h"
#include "kvmmio/fs/fs_options.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::capi {
namespace {

// Messages about a disk or a net device in the C API's words: the config
// struct's fields; a disk's enum fields by their constants
// (KVMMIO_BLK_ENGINE_THREADS). A net device's messages name its bridge only.
class CApiWords final : public SettingWords {
 public:
  std::string named(std::string_view device, Setting id) const override {
    return config(device) + "." + std::string(id.field) + " " + std::string(id.value);
  }
  std::string named(std::string_view device, Setting id, Setting given) const override {
    if (device == "net")  // "kvmmio_net_config.bridge br0 (tap t0)"
      return config(device) + "." + std::string(given.field) + " " + std::string(given.value) + " (" +
             std::string(id.field) + " " + std::string(id.value) + ")";
    return named(device, id) + " with " + config(device) + "." + disk_field_set(given);
  }
  std::string ask(std::string_view device, Setting, Setting wanted) const override {
    if (device == "net")  // "set kvmmio_net_config.bridge to br1"
      return "set " + config(device) + "." + std::string(wanted.field) + " to " + std::string(wanted.value);
    return "set " + config(device) + "." + disk_field_set(wanted);
  }

 private:
  static std::string config(std::string_view device) {
    return device == "disk" ? "kvmmio_blk_config" : "kvmmio_net_config";
  }
  // "read_only = 1", "engine = KVMMIO_BLK_ENGINE_THREADS".
  static std::string disk_field_set(Setting s) {
    const std::string field(s.field);
    if (s.value == "true") return field + " = 1";
    std::string constant = "KVMMIO_BLK_" + field + "_" + std::string(s.value);
    for (char& c : constant) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return field + " = " + constant;
  }
};

const std::shared_ptr<const SettingWords>& c_api_words() {
  static const std::shared_ptr<const SettingWords> words = std::make_shared<CApiWords>();
  return words;
}

// The value of an enum field (or a number of a few choices): `value`
// indexes `choices`, each a name the header gives it and what it means
// here. Anything else is an ArgumentError naming the field and the names.
template <typename T>
T chosen(int64_t value, const char* field, std::initializer_list<std::pair<const char*, T>> choices) {
  if (value >= 0 && static_cast<size_t>(value) < choices.size()) return choices.begin()[value].second;
  std::string names;
  for (const auto& [name, meaning] : choices) names += std::string(names.empty() ? "" : ", ") + name;
  throw ArgumentError(std::string(field) + ": " + std::to_string(value) + " is none of " + names);
}

// A number field from `least` to `most`; `zero` (when not nullptr) says
// what 0 means, and 0 then gives `if_zero`.
uint64_t counted(uint64_t value, const char* field, uint64_t least, uint64_t most, const char* zero = nullptr,
                 uint64_t if_zero = 0) {
  if (value == 0 && zero) return if_zero;
  if (value >= least && value <= most) return value;
  throw ArgumentError(std::string(field) + ": " + std::to_string(value) + ": give " + std::to_string(least) +
                      " to " + std::to_string(most) + (zero ? std::string(", or 0 for ") + zero : ""));
}

// An interface name (a tap's, a bridge's) as Linux takes it.
std::string interface_name(const char* name, const char* field) {
  if (!name) throw ArgumentError(std::string(field) + " is NULL");
  try {
    net::check_interface_name(name, std::string(field) + " \"" + name + "\"");
  } catch (const UserError& e) {
    throw ArgumentError(e.what());
  }
  return name;
}

}  // namespace

void check_size(size_t size, const char* size_name, const char* type, size_t first_version, size_t known) {
  const std::string what = std::string(size_name) + " is " + std::to_string(size);
  if (size < first_version)
    throw ArgumentError(what + ", smaller than any " + type + " (" + std::to_string(first_version) +
                        " bytes and up): set it to sizeof(" + type + ")");
  if (size > known)
    throw ArgumentError(what + ", larger than this library's " + type + " (" + std::to_string(known) +
                        " bytes): the program was built against a newer kvmmio.h than libkvmmio " +
                        KVMMIO_VERSION_STRING + "; run it with the library it was built for");
}

virtio::TransportOptions transport_options(const kvmmio_transport_config* config,
                                           const virtio::TransportOptions& defaults) {
  virtio::TransportOptions o = defaults;
  if (!config) return o;
  const auto c = widened(config, config->size, "kvmmio_transport_config.size", "kvmmio_transport_config",
                         kTransportConfigV1);
  o.version = chosen<uint32_t>(c.version, "kvmmio_transport_config.version",
                               {{"0 (the default)", o.version},
                                {"1 (legacy)", virtio::kVersionLegacy},
                                {"2 (modern)", virtio::kVersionModern}});
  o.notify = chosen<virtio::NotifyMode>(c.notify, "kvmmio_transport_config.notify",
                    {{"KVMMIO_NOTIFY_DEFAULT", o.notify},
                     {"KVMMIO_NOTIFY_IOEVENTFD", virtio::NotifyMode::kIoEventFd},
                     {"KVMMIO_NOTIFY_TRAP", virtio::NotifyMode::kTrap}});
  o.irq = chosen<virtio::IrqMode>(c.irq, "kvmmio_transport_config.irq",
                 {{"KVMMIO_IRQ_DEFAULT", o.irq},
                  {"KVMMIO_IRQ_IRQFD", virtio::IrqMode::kIrqFd},
                  {"KVMMIO_IRQ_RELAY", virtio::IrqMode::kRelay}});
  o.regs = chosen<virtio::RegsMode>(c.regs, "kvmmio_transport_config.regs",
                  {{"KVMMIO_REGS_DEFAULT", o.regs},
                   {"KVMMIO_REGS_MIRROR", virtio::RegsMode::kMirror},
                   {"KVMMIO_REGS_TRAP", virtio::RegsMode::kTrap}});
  o.event_idx = chosen<bool>(c.event_idx, "kvmmio_transport_config.event_idx",
                       {{"KVMMIO_EVENT_IDX_DEFAULT", o.event_idx},
                        {"KVMMIO_EVENT_IDX_ON", true},
                        {"KVMMIO_EVENT_IDX_OFF", false}});
  return o;
}

net::NetOptions net_options(const kvmmio_net_config* config) {
  const auto c = widened(config, config ? config->size : 0, "kvmmio_net_config.size", "kvmmio_net_config",
                         kNetConfigV1);
  net::NetOptions o;
  o.words = c_api_words();
  if (!c.tap)
    throw ArgumentError("kvmmio_net_config.tap is NULL: name the tap (it is created if it does not exist)");
  o.tap = interface_name(c.tap, "kvmmio_net_config.tap");
  o.vhost = chosen<net::VhostMode>(c.vhost, "kvmmio_net_config.vhost",
                   {{"KVMMIO_VHOST_AUTO", net::VhostMode::kAuto},
                    {"KVMMIO_VHOST_ON", net::VhostMode::kOn},
                    {"KVMMIO_VHOST_OFF", net::VhostMode::kOff}});
  o.queue_pairs = static_cast<uint16_t>(
      counted(c.queue_pairs, "kvmmio_net_config.queue_pairs", 1, net::NetOptions::kMaxQueuePairs, "1", 1));
  o.mtu = static_cast<uint16_t>(
      counted(c.mtu, "kvmmio_net_config.mtu", net::NetOptions::kMinMtu, 65535, "none offered", 0));
  const std::array<uint8_t, 6> mac = std::to_array(c.mac);
  if (mac != std::array<uint8_t, 6>{}) {
    if (mac[0] & 1)
      throw ArgumentError("kvmmio_net_config.mac " + net::mac_text(mac) +
                          ": a multicast address (the first byte is odd) cannot be a NIC's MAC; all zero derives "
                          "one from the tap's name");
    o.mac = mac;
  }
  if (c.bridge) o.bridge = interface_name(c.bridge, "kvmmio_net_config.bridge");
  o.poll_us = static_cast<uint32_t>(counted(c.poll_us, "kvmmio_net_config.poll_us", 0, net::NetOptions::kMaxPollUs));
  if (o.poll_us && o.vhost == net::VhostMode::kOff)
    throw ArgumentError("kvmmio_net_config.poll_us: vhost-net's busy polling: use it with KVMMIO_VHOST_ON or "
                        "KVMMIO_VHOST_AUTO, or leave it 0");
  o.transport = transport_options(c.transport, {});
  return o;
}

BlockOptions block_options(const kvmmio_blk_config* config) {
  const auto c = widened(config, config ? config->size : 0, "kvmmio_blk_config.size", "kvmmio_blk_config",
                         kBlkConfigV1);
  BlockOptions b;
  block::DiskOptions& d = b.disk;
  d.words = c_api_words();
  if (!c.path || !*c.path) throw ArgumentError("kvmmio_blk_config.path is NULL or empty: give the image's path");
  d.path = c.path;
  d.read_only = c.read_only != 0;
  d.block_device = c.block_device != 0;
  if (c.serial) {
    const size_t n = ::strnlen(c.serial, block::spec::kIdBytes + 1);
    if (n == 0 || n > block::spec::kIdBytes)
      throw ArgumentError("kvmmio_blk_config.serial: give 1 to " + std::to_string(block::spec::kIdBytes) +
                          " bytes (the guest reads them as the disk's serial), or NULL for none");
    d.serial = c.serial;
  }
  d.cache = chosen<block::CacheMode>(c.cache, "kvmmio_blk_config.cache",
                   {{"KVMMIO_BLK_CACHE_WRITEBACK", block::CacheMode::kWriteback},
                    {"KVMMIO_BLK_CACHE_NONE", block::CacheMode::kNone}});
  d.engine = chosen<block::EngineChoice>(c.engine, "kvmmio_blk_config.engine",
                    {{"KVMMIO_BLK_ENGINE_AUTO", block::EngineChoice::kDefault},
                     {"KVMMIO_BLK_ENGINE_IO_URING", block::EngineChoice::kIoUring},
                     {"KVMMIO_BLK_ENGINE_THREADS", block::EngineChoice::kThreads}});
  d.queues = static_cast<unsigned>(counted(c.queues, "kvmmio_blk_config.queues", 1, block::kMaxDiskQueues, "1", 1));
  b.device.serial = d.serial;
  b.device.engine = d.engine;
  b.device.queues = *d.queues;
  return b;
}

ConsoleOptions console_options(const kvmmio_console_config* config) {
  const auto c = widened(config, config ? config->size : 0, "kvmmio_console_config.size", "kvmmio_console_config",
                         kConsoleConfigV1);
  const std::string fd = "kvmmio_console_config.output_fd " + std::to_string(c.output_fd);
  if (c.output_fd < 0) throw ArgumentError(fd + ": give the fd the guest's output is written to");
  const int flags = ::fcntl(c.output_fd, F_GETFL);
  if (flags < 0) throw ArgumentError(fd + ": not an open fd");
  if ((flags & O_ACCMODE) == O_RDONLY) throw ArgumentError(fd + ": open for reading only; the guest writes to it");
  return {.output_fd = c.output_fd, .input_space = c.input_space, .input_opaque = c.input_opaque};
}

namespace {

// A vhost-user device's backend socket (`field`, e.g.
// "kvmmio_fs_config.socket_fd"): a connected unix stream socket,
// duplicated for the device.
UniqueFd backend_socket(int socket_fd, const std::string& field) {
  const std::string fd = field + " " + std::to_string(socket_fd);
  if (socket_fd < 0) throw ArgumentError(fd + ": give a unix stream socket connected to the backend");
  int domain = 0, type = 0;
  socklen_t len = sizeof domain;
  if (::fcntl(socket_fd, F_GETFD) < 0) throw ArgumentError(fd + ": not an open fd");
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX ||
      (len = sizeof type, ::getsockopt(socket_fd, SOL_SOCKET, SO_TYPE, &type, &len)) != 0 || type != SOCK_STREAM)
    throw ArgumentError(fd + ": not a unix stream socket");
  UniqueFd dup(::fcntl(socket_fd, F_DUPFD_CLOEXEC, 0));
  if (!dup) throw_errno(fd + ": duplicating it");
  return dup;
}

// A vhost-user device's reply timeout (`field`); 0: the default.
std::chrono::milliseconds reply_timeout(uint32_t ms, const char* field) {
  return std::chrono::milliseconds(counted(ms, field, 1, vhost::VhostUserFrontend::kMaxReplyTimeout.count(),
                                           "the default, 2000",
                                           vhost::VhostUserFrontend::kDefaultReplyTimeout.count()));
}

}  // namespace

FsConfig fs_config(const kvmmio_fs_config* config) {
  const auto c = widened(config, config ? config->size : 0, "kvmmio_fs_config.size", "kvmmio_fs_config", kFsConfigV1);
  if (!c.tag) throw ArgumentError("kvmmio_fs_config.tag is NULL");
  if (const std::string problem = fs::tag_problem(c.tag); !problem.empty())
    throw ArgumentError("kvmmio_fs_config.tag \"" + std::string(c.tag) + "\": " + problem);
  UniqueFd socket = backend_socket(c.socket_fd, "kvmmio_fs_config.socket_fd");
  return {.tag = c.tag,
          .socket = std::move(socket),
          .reply_timeout = reply_timeout(c.reply_timeout_ms, "kvmmio_fs_config.reply_timeout_ms")};
}

VhostUserNetConfig vhost_user_net_config(const kvmmio_vhost_user_net_config* config) {
  const auto c = widened(config, config ? config->size : 0, "kvmmio_vhost_user_net_config.size",
                         "kvmmio_vhost_user_net_config", kVhostUserNetConfigV1);
  const std::array<uint8_t, 6> mac = std::to_array(c.mac);
  if (mac == std::array<uint8_t, 6>{})
    throw ArgumentError("kvmmio_vhost_user_net_config.mac is all zero: give the guest's unicast MAC");
  if (mac[0] & 1)
    throw ArgumentError("kvmmio_vhost_user_net_config.mac " + net::mac_text(mac) +
                        ": a multicast address (the first byte is odd) cannot be a NIC's MAC");
  UniqueFd socket = backend_socket(c.socket_fd, "kvmmio_vhost_user_net_config.socket_fd");
  return {.socket = std::move(socket),
          .mac = mac,
          .reply_timeout = reply_timeout(c.reply_timeout_ms, "kvmmio_vhost_user_net_config.reply_timeout_ms")};
}

std::unique_ptr<block::VirtioBlock> make_block(const BlockOptions& options, const GuestMemory& memory,
                                               EventLoop& loop) {
  return std::make_unique<block::VirtioBlock>(memory, loop, block::DiskImage::open(options.disk), options.device);
}

std::unique_ptr<console::VirtioConsole> make_console(const ConsoleOptions& options, const GuestMemory& memory,
                                                     EventLoop& loop) {
  auto console = std::make_unique<console::VirtioConsole>(memory, loop, options.output_fd);
  if (options.input_space)
    console->set_rx_space_callback([fn = options.input_space, opaque = options.input_opaque] { fn(opaque); });
  return console;
}

}  // namespace kvmmio::capi
