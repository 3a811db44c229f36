// SPDX-License-Identifier: BSD-2-Clause
// The C API (kvmmio/kvmmio.h): its handles over the C++ objects (made from
// the typed configs of capi/configs.h), and the one boundary rule: every
// function runs its body in guarded(), which turns each exception into a
// kvmmio_status and the calling thread's message, so none crosses into C.
#include "kvmmio/kvmmio.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>

#include "capi/callback_device.h"
#include "capi/configs.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log.h"
#include "kvmmio/console/virtio_console.h"
#include "kvmmio/fs/virtio_fs.h"
#include "kvmmio/kvm.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/net/vhost_user_net.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/virtio/kvm_mmio_slot.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "kvmmio/virtio/transport_options.h"
#include "kvmmio/vm.h"

struct kvmmio_vm {
  std::unique_ptr<kvmmio::Kvm> kvm;
  std::unique_ptr<kvmmio::Vm> vm;
  std::unique_ptr<kvmmio::EventLoop> loop;  // the devices' and transports' event loop
  std::atomic<int> devices{0};
};

struct kvmmio_device {
  kvmmio_vm* vm = nullptr;
  std::unique_ptr<kvmmio::virtio::VirtioDevice> device;
  kvmmio::capi::CallbackDevice* callbacks = nullptr;  // a device of callbacks
  kvmmio::net::VirtioNet* net = nullptr;              // the net device
  kvmmio::console::VirtioConsole* console = nullptr;  // the console device
  std::string name;
  kvmmio::virtio::TransportOptions transport_defaults;
  std::atomic<int> transports{0};
  std::optional<kvmmio::DeviceLock::Guard> held;  // kvmmio_device_lock()'s
};

struct kvmmio_transport {
  kvmmio_device* device = nullptr;
  std::unique_ptr<kvmmio::virtio::KvmMmioSlot> slot;
};

namespace {

using kvmmio::LogLevel;
static_assert(static_cast<int>(LogLevel::kDebug) == KVMMIO_LOG_DEBUG &&
              static_cast<int>(LogLevel::kInfo) == KVMMIO_LOG_INFO &&
              static_cast<int>(LogLevel::kWarn) == KVMMIO_LOG_WARN &&
              static_cast<int>(LogLevel::kError) == KVMMIO_LOG_ERROR);

thread_local std::string t_last_error;

using kvmmio::capi::ArgumentError;
// Something made on the handle still lives: KVMMIO_ERR_BUSY.
struct BusyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

kvmmio_status fail(kvmmio_status status, const char* function, const char* what) noexcept {
  try {
    t_last_error = std::string(function) + ": " + what;
  } catch (...) {
    // No room for the message: the status still says what happened.
  }
  return status;
}

// Runs `body`; every exception becomes a status and this thread's message.
template <typename F>
kvmmio_status guarded(const char* function, F&& body) noexcept {
  try {
    body();
    return KVMMIO_OK;
  } catch (const BusyError& e) {
    return fail(KVMMIO_ERR_BUSY, function, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(KVMMIO_ERR_INVALID, function, e.what());
  } catch (const kvmmio::UserError& e) {
    return fail(KVMMIO_ERR_USER, function, e.what());
  } catch (const std::system_error& e) {
    return fail(KVMMIO_ERR_SYSTEM, function, e.what());
  } catch (const std::bad_alloc&) {
    return fail(KVMMIO_ERR_NOMEM, function, "out of memory");
  } catch (const std::exception& e) {
    return fail(KVMMIO_ERR_INTERNAL, function, e.what());
  } catch (...) {
    return fail(KVMMIO_ERR_INTERNAL, function, "an unknown exception");
  }
}

template <typename T>
T& need(T* handle, const char* what) {
  if (!handle) throw ArgumentError(std::string(what) + " is NULL");
  return *handle;
}

kvmmio_status new_vm(const char* function, kvmmio_vm** out, const kvmmio::AdoptedVm* adopted) {
  return guarded(function, [&] {
    need(out, "the kvmmio_vm** argument") = nullptr;
    auto handle = std::make_unique<kvmmio_vm>();
    handle->kvm = std::make_unique<kvmmio::Kvm>();
    handle->vm = adopted ? std::make_unique<kvmmio::Vm>(*handle->kvm, *adopted)
                         : std::make_unique<kvmmio::Vm>(*handle->kvm);
    handle->loop = std::make_unique<kvmmio::EventLoop>();
    *out = handle.release();
  });
}

// A device made on `vm` by `make`, once `check` has read the caller's
// config: its mistakes are named before the handles' (a config can be
// checked without a VM).
kvmmio_status add_device(const char* function, kvmmio_vm* vm, kvmmio_device** out,
                         const std::function<void()>& check, const std::function<void(kvmmio_device&)>& make) {
  return guarded(function, [&] {
    need(out, "the kvmmio_device** argument") = nullptr;
    check();
    auto handle = std::make_unique<kvmmio_device>();
    handle->vm = &need(vm, "vm");
    make(*handle);
    ++vm->devices;
    *out = handle.release();
  });
}

kvmmio_status add_embedders_ram(const char* function, kvmmio_vm* vm, const kvmmio::RamMapping& mapping,
                                uint32_t flags) {
  return guarded(function, [&] {
    if (flags & ~KVMMIO_RAM_REGISTER_MEMSLOT) throw ArgumentError("unknown flags");
    need(vm, "vm").vm->add_ram(mapping, (flags & KVMMIO_RAM_REGISTER_MEMSLOT) ? kvmmio::RamSlot::kRegister
                                                                              : kvmmio::RamSlot::kExisting);
  });
}

// A vhost-user device on the embedder's socket (`shown` names it): `make`
// builds it on the front end; a backend that fails the first exchanges (no
// answer, a missing feature) is the set-up's error, not the caller's.
template <class Make>
std::unique_ptr<kvmmio::virtio::VirtioDevice> on_vhost_user_backend(kvmmio::UniqueFd socket, const std::string& shown,
                                                                    std::chrono::milliseconds reply_timeout,
                                                                    Make make) {
  try {
    return make(kvmmio::vhost::VhostUserFrontend(std::move(socket), shown, reply_timeout));
  } catch (const std::runtime_error& e) {
    throw kvmmio::UserError(e.what());
  }
}

}  // namespace

extern "C" {

const char* kvmmio_last_error(void) { return t_last_error.c_str(); }

const char* kvmmio_version(void) { return KVMMIO_VERSION_STRING; }

kvmmio_status kvmmio_set_log_sink(kvmmio_log_fn sink, void* opaque) {
  return guarded(__func__, [&] {
    if (!sink) return kvmmio::set_log_sink({});
    kvmmio::set_log_sink([sink, opaque](LogLevel level, std::string_view message) {
      const std::string line(message);
      sink(opaque, static_cast<int>(level), line.c_str());
    });
  });
}

kvmmio_status kvmmio_set_log_level(int level) {
  return guarded(__func__, [&] {
    if (level < KVMMIO_LOG_DEBUG || level > KVMMIO_LOG_ERROR)
      throw ArgumentError("level " + std::to_string(level) + " is none of KVMMIO_LOG_DEBUG..KVMMIO_LOG_ERROR");
    kvmmio::set_log_level(static_cast<LogLevel>(level));
  });
}

kvmmio_status kvmmio_vm_create(kvmmio_vm** vm) { return new_vm(__func__, vm, nullptr); }

kvmmio_status kvmmio_vm_adopt(int vm_fd, uint32_t first_memslot, uint32_t memslots, uint32_t flags,
                              kvmmio_vm** vm) {
  if (flags & ~KVMMIO_ADOPT_IRQCHIP_READY)
    return fail(KVMMIO_ERR_INVALID, __func__, "unknown flags");
  const kvmmio::AdoptedVm adopted{.fd = vm_fd, .first_memslot = first_memslot, .memslots = memslots,
                                  .irqchip_ready = (flags & KVMMIO_ADOPT_IRQCHIP_READY) != 0};
  return new_vm(__func__, vm, &adopted);
}

kvmmio_status kvmmio_vm_irqchip_ready(kvmmio_vm* vm) {
  return guarded(__func__, [&] { need(vm, "vm").vm->set_irqchip_ready(); });
}

int kvmmio_vm_fd(const kvmmio_vm* vm) { return vm ? vm->vm->fd() : -1; }

kvmmio_status kvmmio_vm_add_ram(kvmmio_vm* vm, uint64_t gpa, uint64_t size, void** host) {
  return guarded(__func__, [&] {
    const kvmmio::RamRegion& r = need(vm, "vm").vm->add_ram(gpa, size);
    if (host) *host = r.host();
  });
}

kvmmio_status kvmmio_vm_add_ram_host(kvmmio_vm* vm, uint64_t gpa, uint64_t size, void* host, uint32_t flags) {
  if (!host) return fail(KVMMIO_ERR_INVALID, __func__, "host is NULL");
  return add_embedders_ram(__func__, vm, {.gpa = gpa, .size = size, .host = host}, flags);
}

kvmmio_status kvmmio_vm_add_ram_fd(kvmmio_vm* vm, uint64_t gpa, uint64_t size, int fd, uint64_t offset,
                                   uint32_t flags) {
  if (fd < 0) return fail(KVMMIO_ERR_INVALID, __func__, "fd is negative");
  return add_embedders_ram(__func__, vm, {.gpa = gpa, .size = size, .fd = fd, .offset = offset}, flags);
}

kvmmio_status kvmmio_vm_destroy(kvmmio_vm* vm) {
  return guarded(__func__, [&] {
    if (!vm) return;
    if (const int n = vm->devices.load())
      throw BusyError(std::to_string(n) + " device(s) made on this VM still exist: destroy them first");
    delete vm;
  });
}

kvmmio_status kvmmio_device_create(kvmmio_vm* vm, const kvmmio_device_ops* ops, size_t ops_size, void* opaque,
                                   kvmmio_device** device) {
  kvmmio_device_ops widened{};
  // Up to queue_notify: what every version of the struct has.
  constexpr size_t kFirstVersion = offsetof(kvmmio_device_ops, queue_notify) + sizeof(ops->queue_notify);
  return add_device(
      __func__, vm, device,
      [&] { widened = kvmmio::capi::widened(ops, ops_size, "ops_size", "kvmmio_device_ops", kFirstVersion); },
      [&](kvmmio_device& d) {
        auto callbacks = std::make_unique<kvmmio::capi::CallbackDevice>(vm->vm->memory(), widened, opaque);
        d.callbacks = callbacks.get();
        d.name = callbacks->name();
        d.device = std::move(callbacks);
      });
}

kvmmio_status kvmmio_net_create(kvmmio_vm* vm, const kvmmio_net_config* config, kvmmio_device** device) {
  kvmmio::net::NetOptions options;
  return add_device(
      __func__, vm, device, [&] { options = kvmmio::capi::net_options(config); },
      [&](kvmmio_device& d) {
        // (VirtioNet's index is unused: the default MAC derives from the tap.)
        auto net = std::make_unique<kvmmio::net::VirtioNet>(options, vm->vm->memory(), *vm->loop);
        d.net = net.get();
        d.name = "net " + options.tap;
        d.transport_defaults = options.transport;
        d.device = std::move(net);
      });
}

int kvmmio_net_uses_vhost(const kvmmio_device* device) {
  if (!device || !device->net) return KVMMIO_ERR_INVALID;
  return device->net->uses_vhost() ? 1 : 0;
}

kvmmio_status kvmmio_blk_create(kvmmio_vm* vm, const kvmmio_blk_config* config, kvmmio_device** device) {
  kvmmio::capi::BlockOptions options;
  return add_device(
      __func__, vm, device, [&] { options = kvmmio::capi::block_options(config); },
      [&](kvmmio_device& d) {
        d.device = kvmmio::capi::make_block(options, vm->vm->memory(), *vm->loop);
        d.name = "disk " + options.disk.path;
      });
}

kvmmio_status kvmmio_fs_create(kvmmio_vm* vm, const kvmmio_fs_config* config, kvmmio_device** device) {
  kvmmio::capi::FsConfig fs;
  return add_device(
      __func__, vm, device, [&] { fs = kvmmio::capi::fs_config(config); },
      [&](kvmmio_device& d) {
        const std::string shown = "kvmmio_fs_config.socket_fd " + std::to_string(config->socket_fd);
        d.device = on_vhost_user_backend(std::move(fs.socket), shown, fs.reply_timeout, [&](auto frontend) {
          return std::make_unique<kvmmio::fs::VirtioFs>(kvmmio::fs::FsOptions{fs.tag, shown}, std::move(frontend),
                                                        vm->vm->memory(), *vm->loop);
        });
        d.name = "fs " + fs.tag;
      });
}

kvmmio_status kvmmio_vhost_user_net_create(kvmmio_vm* vm, const kvmmio_vhost_user_net_config* config,
                                           kvmmio_device** device) {
  kvmmio::capi::VhostUserNetConfig net;
  return add_device(
      __func__, vm, device, [&] { net = kvmmio::capi::vhost_user_net_config(config); },
      [&](kvmmio_device& d) {
        const std::string shown = "kvmmio_vhost_user_net_config.socket_fd " + std::to_string(config->socket_fd);
        d.device = on_vhost_user_backend(std::move(net.socket), shown, net.reply_timeout, [&](auto frontend) {
          return std::make_unique<kvmmio::net::VhostUserNet>(net.mac, std::move(frontend), vm->vm->memory(),
                                                             *vm->loop);
        });
        d.name = "net vhost-user " + kvmmio::net::mac_text(net.mac);
      });
}

kvmmio_status kvmmio_console_create(kvmmio_vm* vm, const kvmmio_console_config* config, kvmmio_device** device) {
  kvmmio::capi::ConsoleOptions options;
  return add_device(
      __func__, vm, device, [&] { options = kvmmio::capi::console_options(config); },
      [&](kvmmio_device& d) {
        auto console = kvmmio::capi::make_console(options, vm->vm->memory(), *vm->loop);
        d.console = console.get();
        d.name = "console";
        d.device = std::move(console);
      });
}

kvmmio_status kvmmio_console_input(kvmmio_device* device, const void* data, size_t len, size_t* taken) {
  return guarded(__func__, [&] {
    need(taken, "taken") = 0;
    if (!need(device, "device").console)
      throw ArgumentError("the device is no console device (kvmmio_console_create())");
    if (!data && len) throw ArgumentError("data is NULL");
    *taken = device->console->receive({static_cast<const uint8_t*>(data), len});
  });
}

kvmmio_status kvmmio_device_lock(kvmmio_device* device) {
  return guarded(__func__, [&] {
    kvmmio::DeviceLock* lock = need(device, "device").callbacks ? device->callbacks->lock() : nullptr;
    if (!lock) throw ArgumentError("only a callback device that has been active has a lock to take");
    kvmmio::DeviceLock::Guard guard = lock->lock();
    device->held.emplace(std::move(guard));
  });
}

kvmmio_status kvmmio_device_unlock(kvmmio_device* device) {
  return guarded(__func__, [&] {
    if (!need(device, "device").held) throw ArgumentError("the device's lock is not held");
    kvmmio::DeviceLock::Guard guard = std::move(*device->held);
    device->held.reset();
  });
}

kvmmio_queue* kvmmio_device_queue(kvmmio_device* device, uint32_t index) {
  return device && device->callbacks ? device->callbacks->queue(index) : nullptr;
}

kvmmio_status kvmmio_device_destroy(kvmmio_device* device) {
  return guarded(__func__, [&] {
    if (!device) return;
    if (const int n = device->transports.load())
      throw BusyError(std::to_string(n) + " transport(s) still use this device: destroy them first");
    --device->vm->devices;
    delete device;
  });
}

uint32_t kvmmio_queue_index(const kvmmio_queue* queue) { return queue ? queue->index : UINT32_MAX; }

kvmmio_chain* kvmmio_queue_pop(kvmmio_queue* queue) {
  kvmmio_chain* chain = nullptr;
  const kvmmio_status s = guarded(__func__, [&] { chain = need(queue, "queue").pop(); });
  return s == KVMMIO_OK ? chain : nullptr;
}

uint64_t kvmmio_chain_readable(const kvmmio_chain* chain) { return chain ? chain->chain.readable_bytes : 0; }

uint64_t kvmmio_chain_writable(const kvmmio_chain* chain) { return chain ? chain->chain.writable_bytes : 0; }

size_t kvmmio_chain_read(const kvmmio_chain* chain, uint64_t offset, void* data, size_t len) {
  if (!chain || (!data && len)) return 0;
  return kvmmio::virtio::read_from_chain(chain->memory, chain->chain, offset,
                                         {static_cast<uint8_t*>(data), len});
}

size_t kvmmio_chain_write(kvmmio_chain* chain, uint64_t offset, const void* data, size_t len) {
  if (!chain || (!data && len)) return 0;
  return kvmmio::virtio::write_to_chain(chain->memory, chain->chain, offset,
                                        {static_cast<const uint8_t*>(data), len});
}

void kvmmio_queue_push(kvmmio_queue* queue, kvmmio_chain* chain, uint32_t written) {
  if (queue && chain) queue->push(chain, written);
}

int kvmmio_queue_interrupt(kvmmio_queue* queue) {
  int raised = 0;
  const kvmmio_status s = guarded(__func__, [&] { raised = need(queue, "queue").interrupt_if_wanted(); });
  return s == KVMMIO_OK ? raised : s;
}

uint64_t kvmmio_transport_window_size(void) { return kvmmio::virtio::MmioTransport::window_size(); }

kvmmio_status kvmmio_transport_create(kvmmio_vm* vm, kvmmio_device* device, uint64_t base, uint32_t gsi,
                                      const kvmmio_transport_config* config, kvmmio_transport** transport) {
  return guarded(__func__, [&] {
    need(transport, "the kvmmio_transport** argument") = nullptr;
    // The config's mistakes first, as the devices' (add_device()).
    const kvmmio::virtio::TransportOptions options = kvmmio::capi::transport_options(
        config, device ? device->transport_defaults : kvmmio::virtio::TransportOptions{});
    if (need(device, "device").vm != &need(vm, "vm")) throw ArgumentError("the device was made on another VM");
    const kvmmio::virtio::KvmMmioSlotConfig slot{.base = base, .gsi = gsi, .name = device->name, .options = options};
    auto handle = std::make_unique<kvmmio_transport>();
    handle->device = device;
    handle->slot = std::make_unique<kvmmio::virtio::KvmMmioSlot>(*vm->vm, *device->device, *vm->loop, slot);
    ++device->transports;
    *transport = handle.release();
  });
}

kvmmio_status kvmmio_transport_mmio(kvmmio_transport* transport, uint64_t offset, void* data, uint32_t len,
                                    int is_write) {
  return guarded(__func__, [&] {
    kvmmio::virtio::MmioTransport& t = need(transport, "transport").slot->transport();
    if (len != 1 && len != 2 && len != 4 && len != 8) throw ArgumentError("len must be 1, 2, 4 or 8");
    if (offset >= t.window_size() || len > t.window_size() - offset)
      throw ArgumentError("the access is outside the register window");
    if (!data) throw ArgumentError("data is NULL");
    auto* bytes = static_cast<uint8_t*>(data);
    if (is_write)
      t.mmio_write(offset, std::span<const uint8_t>(bytes, len));
    else
      t.mmio_read(offset, std::span<uint8_t>(bytes, len));
  });
}

int kvmmio_transport_mirror_mapped(const kvmmio_transport* transport) {
  if (!transport) return KVMMIO_ERR_INVALID;
  return transport->slot->mirror_mapped() ? 1 : 0;
}

kvmmio_status kvmmio_transport_counters(const kvmmio_transport* transport, kvmmio_counter_fn fn, void* opaque) {
  return guarded(__func__, [&] {
    const kvmmio::virtio::KvmMmioSlot& slot = *need(transport, "transport").slot;
    need(fn, "fn");
    const kvmmio::virtio::VirtioDevice& device = *transport->device->device;
    const kvmmio::virtio::TransportCounters& counters = slot.transport().counters();
    // As the kvmmio program reports a device: guest_errors counts the
    // device's own too (vmm/stats/device_stats.cc).
    counters.each([&](const char* name, uint64_t value) {
      if (name == std::string_view("guest_errors")) value += device.guest_errors();
      fn(opaque, name, value);
    });
    fn(opaque, "interrupt_acks_in_kernel", slot.interrupt_acks_in_kernel());
    device.visit_counters([&](const char* name, uint64_t value) { fn(opaque, name, value); });
  });
}

kvmmio_status kvmmio_transport_counter(const kvmmio_transport* transport, const char* name, uint64_t* value) {
  struct Lookup {
    const char* name;
    std::optional<uint64_t> value;
  } lookup{name, std::nullopt};
  if (!name || !value) return fail(KVMMIO_ERR_INVALID, __func__, "name or value is NULL");
  const kvmmio_status s = kvmmio_transport_counters(
      transport,
      [](void* opaque, const char* counter, uint64_t v) {
        auto* l = static_cast<Lookup*>(opaque);
        if (!l->value && std::strcmp(counter, l->name) == 0) l->value = v;
      },
      &lookup);
  if (s != KVMMIO_OK) return s;
  if (!lookup.value) return fail(KVMMIO_ERR_INVALID, __func__, (std::string("no counter ") + name).c_str());
  *value = *lookup.value;
  return KVMMIO_OK;
}

void kvmmio_transport_destroy(kvmmio_transport* transport) {
  if (!transport) return;
  kvmmio_device* device = transport->device;
  delete transport;  // the slot's destructor does not throw
  --device->transports;
}

}  // extern "C"
