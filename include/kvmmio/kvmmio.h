/* SPDX-License-Identifier: BSD-2-Clause */
/* kvmmio's C API: a virtio-mmio transport on a guest-physical window, with
 * its irqfd, notify ioeventfds and read-only register mirror, in front of a
 * device supplied as C callbacks or of the library's virtio-net device
 * (vhost-net), on a KVM VM that kvmmio creates or adopts from the embedder;
 * and the library's log sink. C11; the same header compiles as C++.
 *
 * Rules of the boundary (docs/embedding.md, "The C API"):
 *  - Handles are opaque. Every function that can fail returns a
 *    kvmmio_status (KVMMIO_OK, or a negative error) and, on failure, leaves
 *    a message for kvmmio_last_error() in the calling thread. No C++
 *    exception ever leaves the library through these functions.
 *  - Destroy in reverse order of creation: transports, then devices, then
 *    the VM. kvmmio_vm_destroy() and kvmmio_device_destroy() refuse
 *    (KVMMIO_ERR_BUSY) while something made on them is alive.
 *  - Callbacks run on a vCPU thread (a register access the embedder hands
 *    over) or on the library's event-loop thread (a polled queue notify),
 *    one at a time per device, holding the device's lock. A callback may
 *    call the kvmmio_queue_* and kvmmio_chain_* functions, nothing else of
 *    this header. It must not unwind (longjmp, C++ exceptions) into the
 *    library.
 *  - Struct arguments that may grow carry their size (kvmmio_device_create's
 *    ops_size), so a program built against an older header keeps working:
 *    the ABI promise of docs/embedding.md, "Versions and the ABI". */
#ifndef KVMMIO_KVMMIO_H
#define KVMMIO_KVMMIO_H

#include <stddef.h>
#include <stdint.h>

#include "kvmmio/base/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Errors ------------------------------------------------------------- */

typedef enum kvmmio_status {
  KVMMIO_OK = 0,
  KVMMIO_ERR_INVALID = -1,  /* an argument is wrong (NULL handle, bad size, malformed options) */
  KVMMIO_ERR_USER = -2,     /* the host or the set-up needs a fix the message names (no /dev/kvm, no tap) */
  KVMMIO_ERR_SYSTEM = -3,   /* a system call failed; the message names it and its errno */
  KVMMIO_ERR_BUSY = -4,     /* still in use: destroy what was made on it first */
  KVMMIO_ERR_NOMEM = -5,
  KVMMIO_ERR_INTERNAL = -6, /* anything else: a bug of kvmmio's */
} kvmmio_status;

/* The message of the calling thread's last failed call ("" if none), e.g.
 * "kvmmio_vm_create: cannot open /dev/kvm: ... (run as root or add your
 * user to the 'kvm' group)". Valid until the thread's next failed call. */
KVMMIO_EXPORT const char* kvmmio_last_error(void);
/* The library's version, e.g. "0.1.0". */
KVMMIO_EXPORT const char* kvmmio_version(void);

/* ---- Logging ------------------------------------------------------------ */

enum { KVMMIO_LOG_DEBUG = 0, KVMMIO_LOG_INFO = 1, KVMMIO_LOG_WARN = 2, KVMMIO_LOG_ERROR = 3 };

/* Receives each library message at or above the level: one complete line
 * (NUL-terminated, no newline, no "kvmmio:" prefix), from whichever thread
 * logs, one call at a time. It must not call into the library. */
typedef void (*kvmmio_log_fn)(void* opaque, int level, const char* message);
/* Installs `sink` (NULL: the default, "kvmmio: warning: ..." lines on stderr). */
KVMMIO_EXPORT kvmmio_status kvmmio_set_log_sink(kvmmio_log_fn sink, void* opaque);
/* Drops messages below `level` (default KVMMIO_LOG_INFO). */
KVMMIO_EXPORT kvmmio_status kvmmio_set_log_level(int level);

/* ---- The VM --------------------------------------------------------------- */

typedef struct kvmmio_vm kvmmio_vm;

/* kvmmio's own VM: opens /dev/kvm and creates a VM (KVMMIO_ERR_USER, naming
 * the fix, without a usable /dev/kvm). */
KVMMIO_EXPORT kvmmio_status kvmmio_vm_create(kvmmio_vm** vm);

/* The embedder's interrupt controller is initialised already: irqfds go to
 * KVM at once (else they wait for kvmmio_vm_irqchip_ready()). */
#define KVMMIO_ADOPT_IRQCHIP_READY 0x1u
/* Adopts the embedder's VM: `vm_fd` from KVM_CREATE_VM (kvmmio keeps a dup),
 * and the memory slot numbers kvmmio may use, [first_memslot, first_memslot
 * + memslots), which the embedder keeps free: one per device with the
 * register mirror, one per RAM region kvmmio registers. kvmmio makes no
 * memory slot, interrupt controller or routing change beyond those. */
KVMMIO_EXPORT kvmmio_status kvmmio_vm_adopt(int vm_fd, uint32_t first_memslot, uint32_t memslots,
                                            uint32_t flags, kvmmio_vm** vm);
/* Tells kvmmio the embedder's interrupt controller is now initialised. */
KVMMIO_EXPORT kvmmio_status kvmmio_vm_irqchip_ready(kvmmio_vm* vm);
/* The VM fd (kvmmio's own, or its dup of the adopted one). */
KVMMIO_EXPORT int kvmmio_vm_fd(const kvmmio_vm* vm);

/* Guest RAM kvmmio makes: a memfd, mapped shared at *host, registered as a
 * memory slot. Page-aligned gpa and size. */
KVMMIO_EXPORT kvmmio_status kvmmio_vm_add_ram(kvmmio_vm* vm, uint64_t gpa, uint64_t size, void** host);
/* kvmmio registers the RAM below as a memory slot too (else the embedder
 * has made it one already). */
#define KVMMIO_RAM_REGISTER_MEMSLOT 0x1u
/* The embedder's guest RAM at its own host mapping (page-aligned, mapped
 * for the VM's life): what devices and vhost reach guest memory through. */
KVMMIO_EXPORT kvmmio_status kvmmio_vm_add_ram_host(kvmmio_vm* vm, uint64_t gpa, uint64_t size, void* host,
                                                   uint32_t flags);
/* The embedder's guest RAM in a file (memfd, hugetlbfs, ...) from `offset`
 * (page-aligned): kvmmio maps it shared itself and keeps a dup of `fd`. */
KVMMIO_EXPORT kvmmio_status kvmmio_vm_add_ram_fd(kvmmio_vm* vm, uint64_t gpa, uint64_t size, int fd,
                                                 uint64_t offset, uint32_t flags);

/* Destroys the VM object (an adopted VM lives on with the embedder's fd).
 * KVMMIO_ERR_BUSY while devices made on it exist. NULL is a no-op. */
KVMMIO_EXPORT kvmmio_status kvmmio_vm_destroy(kvmmio_vm* vm);

/* ---- Devices ---------------------------------------------------------------- */

typedef struct kvmmio_device kvmmio_device;
typedef struct kvmmio_queue kvmmio_queue;
typedef struct kvmmio_chain kvmmio_chain;

/* A device as C callbacks. The transport owns everything guest-facing
 * (registers, feature negotiation, ring validation, notifies, interrupts);
 * the device gets its ready queues from DRIVER_OK to reset. */
typedef struct kvmmio_device_ops {
  const char* name;         /* names the device in messages (copied) */
  uint32_t device_id;       /* virtio device ID (virtio 1.2 section 5), e.g. 4 entropy */
  uint32_t num_queues;      /* 1 to 64 */
  uint16_t queue_max_size;  /* every queue's QueueNumMax: a power of two, at most 32768 */
  uint64_t features;        /* device-type feature bits; the transport adds its own */
  uint32_t config_size;     /* bytes of configuration space, at most 256 */
  /* Configuration space accesses, within config_size (NULL: reads as zeros,
   * writes are ignored). */
  void (*read_config)(void* opaque, uint32_t offset, void* data, uint32_t len);
  void (*write_config)(void* opaque, uint32_t offset, const void* data, uint32_t len);
  /* DRIVER_OK with the features the driver accepted; nonzero refuses (the
   * device then needs a reset). NULL: accept. */
  int (*activate)(void* opaque, uint64_t features);
  /* The driver made buffers available in `queue` (kvmmio_queue_index()). */
  void (*queue_notify)(void* opaque, kvmmio_queue* queue);
  /* The driver reset the device: every kvmmio_queue and kvmmio_chain of
   * the activation is gone. NULL: nothing to do. */
  void (*reset)(void* opaque);
} kvmmio_device_ops;

/* A device of callbacks on `vm`'s guest memory. `ops_size` is
 * sizeof(kvmmio_device_ops) as the caller knows it. `opaque` is passed to
 * every callback. */
KVMMIO_EXPORT kvmmio_status kvmmio_device_create(kvmmio_vm* vm, const kvmmio_device_ops* ops, size_t ops_size,
                                                 void* opaque, kvmmio_device** device);
/* The library's virtio-net device on a tap, its queues moved by vhost-net
 * (or by kvmmio's userspace backend): `spec` is the kvmmio program's --net
 * value, "tap=NAME[,vhost=on|off|auto][,queues=N][,mac=..][,mtu=N][,bridge=..]" plus
 * the transport's words (version=, notify=, irq=, regs=, event_idx=), which become the
 * defaults of its transport. The default MAC derives from the tap's name
 * (kvmmio/net/net_options.h, default_mac()); `index` is no longer used. */
KVMMIO_EXPORT kvmmio_status kvmmio_net_create(kvmmio_vm* vm, const char* spec, uint32_t index,
                                              kvmmio_device** device);
/* 1 when vhost-net moves the net device's packets, 0 when kvmmio does, <0 not a net device. */
KVMMIO_EXPORT int kvmmio_net_uses_vhost(const kvmmio_device* device);

/* From a thread of the device's own (not from a callback, which holds the
 * lock already): takes and releases the device's lock, under which its
 * queues may be used. */
KVMMIO_EXPORT kvmmio_status kvmmio_device_lock(kvmmio_device* device);
KVMMIO_EXPORT kvmmio_status kvmmio_device_unlock(kvmmio_device* device);
/* A ready queue of an active callback device, or NULL (not active, no such
 * queue). Under the device's lock. */
KVMMIO_EXPORT kvmmio_queue* kvmmio_device_queue(kvmmio_device* device, uint32_t index);

/* KVMMIO_ERR_BUSY while a transport uses it. NULL is a no-op. */
KVMMIO_EXPORT kvmmio_status kvmmio_device_destroy(kvmmio_device* device);

/* ---- Queues and chains (callback devices) ------------------------------------ */

KVMMIO_EXPORT uint32_t kvmmio_queue_index(const kvmmio_queue* queue);
/* The next available descriptor chain, validated, or NULL when there is
 * none (or the driver broke the ring: the transport has reported that). The
 * chain belongs to the queue until kvmmio_queue_push(). */
KVMMIO_EXPORT kvmmio_chain* kvmmio_queue_pop(kvmmio_queue* queue);
/* Bytes of the chain's device-readable and device-writable parts. */
KVMMIO_EXPORT uint64_t kvmmio_chain_readable(const kvmmio_chain* chain);
KVMMIO_EXPORT uint64_t kvmmio_chain_writable(const kvmmio_chain* chain);
/* Copies from the readable part, or into the writable part, starting
 * `offset` bytes into it: returns the bytes copied (short at its end). */
KVMMIO_EXPORT size_t kvmmio_chain_read(const kvmmio_chain* chain, uint64_t offset, void* data, size_t len);
KVMMIO_EXPORT size_t kvmmio_chain_write(kvmmio_chain* chain, uint64_t offset, const void* data, size_t len);
/* Returns the chain to the driver with `written` bytes written (the used
 * length); the chain handle is gone afterwards. */
KVMMIO_EXPORT void kvmmio_queue_push(kvmmio_queue* queue, kvmmio_chain* chain, uint32_t written);
/* Interrupts the driver for what was pushed, if it asked to be (flags or
 * EVENT_IDX): returns 1 when it did, 0 when not. */
KVMMIO_EXPORT int kvmmio_queue_interrupt(kvmmio_queue* queue);

/* ---- Transports ---------------------------------------------------------------- */

typedef struct kvmmio_transport kvmmio_transport;

/* The bytes of a virtio-mmio register window (0x200). */
KVMMIO_EXPORT uint64_t kvmmio_transport_window_size(void);

/* One virtio-mmio transport in front of `device` at guest physical `base`,
 * raising `gsi` (on arm64 GSI n is SPI n): its irqfd, its notify
 * ioeventfds, and with regs=mirror (the default) the read-only register
 * mirror over the window (a memory slot; `base` starts a host page holding
 * no other device) plus the InterruptACK ioeventfd, so that a guest's
 * interrupt handler costs no vCPU exit. `options` (NULL or "": the
 * defaults, or a net device's own) is a comma list of the transport's
 * words: version=1|2, notify=ioeventfd|trap, irq=irqfd|relay,
 * regs=mirror|trap, event_idx=on|off. */
KVMMIO_EXPORT kvmmio_status kvmmio_transport_create(kvmmio_vm* vm, kvmmio_device* device, uint64_t base,
                                                    uint32_t gsi, const char* options,
                                                    kvmmio_transport** transport);
/* A guest access of the window that exited to the embedder (KVM_EXIT_MMIO
 * with phys_addr - base = offset): a write of `len` (1, 2, 4 or 8) bytes
 * from `data`, or a read into it. */
KVMMIO_EXPORT kvmmio_status kvmmio_transport_mmio(kvmmio_transport* transport, uint64_t offset, void* data,
                                                  uint32_t len, int is_write);
/* 1: register reads are served by the mapped mirror (no exits); 0: regs=trap,
 * asked for or because KVM lacks read-only memory slots. */
KVMMIO_EXPORT int kvmmio_transport_mirror_mapped(const kvmmio_transport* transport);

/* Receives counters one at a time: the transport's (guest_errors,
 * notifies_trapped, notifies_polled, interrupts_injected, register_reads,
 * ...: docs/usage.md), interrupt_acks_in_kernel, then the device's own. */
typedef void (*kvmmio_counter_fn)(void* opaque, const char* name, uint64_t value);
KVMMIO_EXPORT kvmmio_status kvmmio_transport_counters(const kvmmio_transport* transport, kvmmio_counter_fn fn,
                                                      void* opaque);
/* One counter by name; KVMMIO_ERR_INVALID for a name there is not. */
KVMMIO_EXPORT kvmmio_status kvmmio_transport_counter(const kvmmio_transport* transport, const char* name,
                                                     uint64_t* value);

/* Removes the transport (mirror slot, ioeventfds, irqfd). NULL is a no-op. */
KVMMIO_EXPORT void kvmmio_transport_destroy(kvmmio_transport* transport);

#ifdef __cplusplus
}
#endif

#endif /* KVMMIO_KVMMIO_H */
