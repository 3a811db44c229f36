/* SPDX-License-Identifier: BSD-2-Clause */
/* kvmmio's C API: a virtio-mmio transport on a guest-physical window, with
 * its irqfd, notify ioeventfds and read-only register mirror, in front of a
 * device supplied as C callbacks or of one of the library's devices
 * (virtio-net with vhost-net, virtio-blk, virtio-console), on a KVM VM that
 * kvmmio creates or adopts from the embedder; and the library's log sink.
 * C11; the same header compiles as C++.
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
 *  - Struct arguments that may grow carry their size (the configs' `size`,
 *    kvmmio_device_create's ops_size), so a program built against an older
 *    header keeps working: the ABI promise of docs/embedding.md, "Versions
 *    and the ABI", and "Configs" below. */
#ifndef KVMMIO_KVMMIO_H
#define KVMMIO_KVMMIO_H

#include <stddef.h>
#include <stdint.h>

#include "kvmmio/base/export.h"
#include "kvmmio/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Errors ------------------------------------------------------------- */

typedef enum kvmmio_status {
  KVMMIO_OK = 0,
  KVMMIO_ERR_INVALID = -1,  /* an argument is wrong (NULL handle, bad size, a config field out of range) */
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
/* The library's version, e.g. "0.1.0": KVMMIO_VERSION_STRING of the headers
 * it was built with (kvmmio/version.h has the caller's). */
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

/* ---- Configs ------------------------------------------------------------ */

/* Every config struct starts with `size_t size`: sizeof the struct as the
 * caller's header has it, which its KVMMIO_..._CONFIG_INIT initializer
 * sets, with every other field at its default (designated initializers:
 * C99 and later, C++20):
 *
 *     kvmmio_blk_config blk = KVMMIO_BLK_CONFIG_INIT;
 *     blk.path = "disk.img";
 *     blk.read_only = 1;
 *
 * The library reads the fields `size` covers and gives the others their
 * defaults, so a program built against an older header (a shorter struct)
 * keeps working with a newer library; a size below the struct's first
 * version or above what the library knows (a newer header than the
 * library) is KVMMIO_ERR_INVALID, as is a field out of its range (the
 * message names it: "kvmmio_net_config.mtu: ..."). Fields are only ever
 * added at the end, past the previous version's sizeof. Each field's
 * default is 0 (NULL, the enums' first value) unless its comment says
 * otherwise; a required field has none (the initializer leaves it NULL, or
 * -1 for an fd, which is refused). The library copies what it keeps,
 * strings included. */

/* ---- Transports' options -------------------------------------------------- */

/* KVMMIO_*_DEFAULT (0): the device's default (a net device's
 * kvmmio_net_config.transport), else the library's, named below. */
typedef enum kvmmio_notify {
  KVMMIO_NOTIFY_DEFAULT = 0,
  KVMMIO_NOTIFY_IOEVENTFD = 1, /* queue notifies reach KVM ioeventfds (the library's default) */
  KVMMIO_NOTIFY_TRAP = 2,      /* every notify is an MMIO exit, handled by the transport */
} kvmmio_notify;
typedef enum kvmmio_irq {
  KVMMIO_IRQ_DEFAULT = 0,
  KVMMIO_IRQ_IRQFD = 1, /* a backend's interrupts go straight to the irqfd (the library's default) */
  KVMMIO_IRQ_RELAY = 2, /* they are relayed through the transport */
} kvmmio_irq;
typedef enum kvmmio_regs {
  KVMMIO_REGS_DEFAULT = 0,
  KVMMIO_REGS_MIRROR = 1, /* register reads from the read-only mirror page (the library's default) */
  KVMMIO_REGS_TRAP = 2,   /* every register access is an MMIO exit */
} kvmmio_regs;
typedef enum kvmmio_event_idx {
  KVMMIO_EVENT_IDX_DEFAULT = 0,
  KVMMIO_EVENT_IDX_ON = 1, /* VIRTIO_F_EVENT_IDX offered (the library's default) */
  KVMMIO_EVENT_IDX_OFF = 2,
} kvmmio_event_idx;

/* How one virtio-mmio transport presents its device and moves notifies and
 * interrupts (docs/virtio-mmio.md, "Options"). */
typedef struct kvmmio_transport_config {
  size_t size;                /* sizeof(kvmmio_transport_config) */
  uint32_t version;           /* register layout: 1 legacy, 2 modern; 0: the default (2) */
  kvmmio_notify notify;
  kvmmio_irq irq;
  kvmmio_regs regs;
  kvmmio_event_idx event_idx;
} kvmmio_transport_config;
#define KVMMIO_TRANSPORT_CONFIG_INIT                                                             \
  {.size = sizeof(kvmmio_transport_config), .version = 0, .notify = KVMMIO_NOTIFY_DEFAULT,        \
   .irq = KVMMIO_IRQ_DEFAULT, .regs = KVMMIO_REGS_DEFAULT, .event_idx = KVMMIO_EVENT_IDX_DEFAULT}

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

/* ---- The library's devices ----------------------------------------------- */

typedef enum kvmmio_vhost {
  KVMMIO_VHOST_AUTO = 0, /* vhost-net where /dev/vhost-net opens, else kvmmio's backend (one warning) */
  KVMMIO_VHOST_ON = 1,   /* vhost-net, or KVMMIO_ERR_USER naming the module */
  KVMMIO_VHOST_OFF = 2,  /* kvmmio's userspace backend */
} kvmmio_vhost;

/* The virtio-net device on a tap (docs/virtio-net.md). */
typedef struct kvmmio_net_config {
  size_t size;              /* sizeof(kvmmio_net_config) */
  const char* tap;          /* required: the tap's name (1 to 15 bytes); created if it does not exist */
  kvmmio_vhost vhost;
  uint16_t queue_pairs;     /* RX/TX pairs, 1 to 16 (more than 1: VIRTIO_NET_F_MQ); 0: 1 */
  uint16_t mtu;             /* 68 to 65535, offered as VIRTIO_NET_F_MTU; 0: none offered */
  uint8_t mac[6];           /* a unicast MAC; all zero: derived from the tap's name (the same tap, the same MAC) */
  const char* bridge;       /* an existing bridge the tap is made a port of; NULL: none */
  uint32_t poll_us;         /* vhost-net's busy polling per vring, 0 (off) to 10000 microseconds */
  /* The defaults of the device's transports (kvmmio_transport_create()'s
   * KVMMIO_*_DEFAULT fields); NULL: the library's. */
  const kvmmio_transport_config* transport;
} kvmmio_net_config;
#define KVMMIO_NET_CONFIG_INIT                                                                  \
  {.size = sizeof(kvmmio_net_config), .tap = NULL, .vhost = KVMMIO_VHOST_AUTO, .queue_pairs = 0, \
   .mtu = 0, .mac = {0, 0, 0, 0, 0, 0}, .bridge = NULL, .poll_us = 0, .transport = NULL}

/* The library's virtio-net device on a tap, its queues moved by vhost-net
 * (or by kvmmio's userspace backend). Needs CAP_NET_ADMIN for a tap that
 * does not exist yet, and for a bridge. */
KVMMIO_EXPORT kvmmio_status kvmmio_net_create(kvmmio_vm* vm, const kvmmio_net_config* config,
                                              kvmmio_device** device);
/* 1 when vhost-net moves the net device's packets, 0 when kvmmio does, <0 not a net device. */
KVMMIO_EXPORT int kvmmio_net_uses_vhost(const kvmmio_device* device);

typedef enum kvmmio_blk_cache {
  KVMMIO_BLK_CACHE_WRITEBACK = 0, /* the host's page cache; a write is durable after the guest's next FLUSH */
  KVMMIO_BLK_CACHE_NONE = 1,      /* O_DIRECT: no host page cache */
} kvmmio_blk_cache;
typedef enum kvmmio_blk_engine {
  KVMMIO_BLK_ENGINE_AUTO = 0,     /* io_uring; where its ring cannot be set up, one warning and threads */
  KVMMIO_BLK_ENGINE_IO_URING = 1, /* io_uring, or KVMMIO_ERR_USER naming the fix */
  KVMMIO_BLK_ENGINE_THREADS = 2,  /* a worker thread per queue with pread/pwritev */
} kvmmio_blk_engine;

/* The virtio-blk device on a raw image. The image is opened, checked and
 * locked (shared when read-only, else exclusive) by kvmmio_blk_create(). */
typedef struct kvmmio_blk_config {
  size_t size;              /* sizeof(kvmmio_blk_config) */
  const char* path;         /* required: a raw image, a regular file of whole 512-byte sectors */
  int read_only;            /* nonzero: opened read-only, VIRTIO_BLK_F_RO offered, writes refused */
  int block_device;         /* nonzero: `path` may be a host block device (never one by mistake) */
  const char* serial;       /* GET_ID's answer, 1 to 20 bytes; NULL: none */
  kvmmio_blk_cache cache;
  kvmmio_blk_engine engine;
  uint32_t queues;          /* request queues, 1 to 16 (more than 1: VIRTIO_BLK_F_MQ); 0: 1 */
} kvmmio_blk_config;
#define KVMMIO_BLK_CONFIG_INIT                                                                      \
  {.size = sizeof(kvmmio_blk_config), .path = NULL, .read_only = 0, .block_device = 0, .serial = NULL, \
   .cache = KVMMIO_BLK_CACHE_WRITEBACK, .engine = KVMMIO_BLK_ENGINE_AUTO, .queues = 0}

/* The library's virtio-blk device (device ID 2) on an image; its I/O runs
 * on threads of its own, never on a vCPU or the event loop. */
KVMMIO_EXPORT kvmmio_status kvmmio_blk_create(kvmmio_vm* vm, const kvmmio_blk_config* config,
                                              kvmmio_device** device);

/* Runs when the guest made room for input after kvmmio_console_input()
 * took less than it was given, on any thread, possibly holding device
 * locks: it must only signal (write an eventfd, a pipe) and call nothing
 * of this header. */
typedef void (*kvmmio_console_space_fn)(void* opaque);

/* The virtio-console device: one port, hvc0 in a Linux guest. */
typedef struct kvmmio_console_config {
  size_t size;              /* sizeof(kvmmio_console_config) */
  /* Required: the guest's output is written here, without waiting (make it
   * O_NONBLOCK): when it is full the output waits in the guest's buffers.
   * Not owned: it stays open while the device lives. KVMMIO_CONSOLE_CONFIG_INIT
   * sets -1, which is refused. */
  int output_fd;
  kvmmio_console_space_fn input_space;  /* NULL: none (the embedder retries on its own) */
  void* input_opaque;                   /* input_space's argument */
} kvmmio_console_config;
#define KVMMIO_CONSOLE_CONFIG_INIT \
  {.size = sizeof(kvmmio_console_config), .output_fd = -1, .input_space = NULL, .input_opaque = NULL}

/* The library's virtio-console device (device ID 3). */
KVMMIO_EXPORT kvmmio_status kvmmio_console_create(kvmmio_vm* vm, const kvmmio_console_config* config,
                                                  kvmmio_device** device);
/* Input for the guest (its receive queue): takes what the guest has room
 * for now, and says how much in *taken (0 before the driver is up, or while
 * its buffers are full); keep the rest and give it again once input_space
 * has run. Not from a callback, nor from input_space. */
KVMMIO_EXPORT kvmmio_status kvmmio_console_input(kvmmio_device* device, const void* data, size_t len,
                                                 size_t* taken);

/* The virtio-fs device: a shared folder whose FUSE requests a vhost-user
 * backend in another process (virtiofsd) serves, reading the queues and
 * guest RAM itself (docs/vhost-user.md). The guest's RAM must have files to
 * hand over: kvmmio_vm_add_ram()'s or kvmmio_vm_add_ram_fd()'s, not
 * kvmmio_vm_add_ram_host()'s (the device would fail at DRIVER_OK). */
typedef struct kvmmio_fs_config {
  size_t size;               /* sizeof(kvmmio_fs_config) */
  const char* tag;           /* required: what the guest mounts, 1 to 36 printable ASCII characters, no spaces */
  /* Required: a unix stream socket your program connected to the backend's
   * (virtiofsd --socket-path=PATH). The device uses a duplicate of it; close
   * yours when you like. KVMMIO_FS_CONFIG_INIT sets -1, which is refused. */
  int socket_fd;
  uint32_t reply_timeout_ms; /* the longest wait for one reply of the backend, 1 to 60000; 0: 2000 */
} kvmmio_fs_config;
#define KVMMIO_FS_CONFIG_INIT \
  {.size = sizeof(kvmmio_fs_config), .tag = NULL, .socket_fd = -1, .reply_timeout_ms = 0}

/* The library's virtio-fs device (device ID 26). The backend is asked for
 * its features here: KVMMIO_ERR_USER, naming what happened, when it does
 * not answer in time or lacks a feature the transport needs. */
KVMMIO_EXPORT kvmmio_status kvmmio_fs_create(kvmmio_vm* vm, const kvmmio_fs_config* config,
                                             kvmmio_device** device);

/* The virtio-net device of a user-space switch (DPDK's testpmd, OVS-DPDK)
 * whose vhost-user port moves its packets, reading the queues and guest RAM
 * itself (docs/vhost-user.md): no tap, no vhost-net. Guest RAM as for
 * kvmmio_fs_create(). */
typedef struct kvmmio_vhost_user_net_config {
  size_t size; /* sizeof(kvmmio_vhost_user_net_config) */
  /* Required: a unix stream socket your program connected to the switch's
   * port (e.g. testpmd's --vdev 'net_vhost0,iface=PATH'). The device uses a
   * duplicate of it; close yours when you like. -1 is refused. */
  int socket_fd;
  /* Required: the guest's unicast MAC, offered as VIRTIO_NET_F_MAC (all
   * zero is refused: there is no tap's name to derive one from). */
  uint8_t mac[6];
  uint32_t reply_timeout_ms; /* the longest wait for one reply of the backend, 1 to 60000; 0: 2000 */
} kvmmio_vhost_user_net_config;
#define KVMMIO_VHOST_USER_NET_CONFIG_INIT \
  {.size = sizeof(kvmmio_vhost_user_net_config), .socket_fd = -1, .mac = {0, 0, 0, 0, 0, 0}, .reply_timeout_ms = 0}

/* The library's vhost-user-net device (device ID 1: a receive and a
 * transmit queue, the backend's offloads and MRG_RXBUF offered). The
 * backend is asked for its features here: KVMMIO_ERR_USER, naming what
 * happened, when it does not answer in time or lacks a feature the
 * transport needs. */
KVMMIO_EXPORT kvmmio_status kvmmio_vhost_user_net_create(kvmmio_vm* vm, const kvmmio_vhost_user_net_config* config,
                                                         kvmmio_device** device);

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
 * ioeventfds, and with KVMMIO_REGS_MIRROR (the default) the read-only
 * register mirror over the window (a memory slot; `base` starts a host page
 * holding no other device) plus the InterruptACK ioeventfd, so that a
 * guest's interrupt handler costs no vCPU exit. `config` NULL: every option
 * at its default (the device's, else the library's). */
KVMMIO_EXPORT kvmmio_status kvmmio_transport_create(kvmmio_vm* vm, kvmmio_device* device, uint64_t base,
                                                    uint32_t gsi, const kvmmio_transport_config* config,
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
