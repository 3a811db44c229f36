// SPDX-License-Identifier: BSD-2-Clause
// Seccomp: the allow-lists of kvmmio's thread classes and their
// installation (see the header; docs/security.md says why each is there).
#include "vmm/process/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/filter.h>
#include <linux/kvm.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <linux/vhost.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/unique_fd.h"
#include "vmm/process/raw_terminal.h"

namespace kvmmio::vmm {
namespace {

// --- The allow-lists -------------------------------------------------------
// Names, not numbers: libseccomp resolves them for the architecture it
// builds for, and skips those the architecture does not have (arm64 has
// no open, poll, epoll_wait...), so each list names both spellings.

// Every thread: memory (no executable mappings), futexes, clocks, signal
// return, exit, and the fatal-signal path (RawTerminal restores the
// terminal, then the signal is raised again). tgkill is build()'s: to
// this process's threads only.
constexpr const char* kEveryThread[] = {
    "read", "write", "readv", "writev", "close", "lseek",
    "futex", "get_robust_list", "set_robust_list",
    "brk", "munmap", "mremap", "madvise",
    "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "restart_syscall", "sigaltstack",
    "exit", "exit_group", "getpid", "gettid",
    "clock_gettime", "clock_nanosleep", "nanosleep", "gettimeofday", "sched_yield",
    "getrandom", "fstat", "newfstatat", "statx",
};

// Threads that wait in an event loop, or in poll().
constexpr const char* kLoop[] = {"epoll_wait", "epoll_pwait", "epoll_ctl", "fcntl", "poll", "ppoll"};

// Device set-up at DRIVER_OK (a trapped register write: vCPU threads):
// eventfds and timers, the tap monitor's netlink socket bound and read,
// watches. (Opening /dev/vhost-net is an openat of an existing file, and
// the sockets are pinned to their kinds: both in build().)
constexpr const char* kDeviceSetUp[] = {"eventfd2", "timerfd_create", "timerfd_settime",
                                        "bind", "recvfrom", "recvmsg", "dup", "dup3"};

// The tap monitor on the event loop: netlink messages, its retry timer,
// interface ioctls through a datagram socket.
constexpr const char* kTapMonitor[] = {"recvfrom", "recvmsg", "timerfd_settime"};

// virtio-rng on the event loop (hw/rng/virtio_rng.cc): its rate bound's
// timer armed (made at activation: kDeviceSetUp); the bytes themselves
// are getrandom's, which every thread may call.
constexpr const char* kRngTimer[] = {"timerfd_settime"};

// The --stats file (written whole through a temporary file and a rename;
// in place through the fd opened at the start where the directory takes
// no new file). openat is build()'s, with its flags restricted: a new
// file only with O_EXCL, nothing emptied. The path-based rename and
// unlink are x86-64's spellings of the *at calls (arm64 has none), which
// the same libc may use; the sockets' paths are unlinked at exit too.
constexpr const char* kStatsFile[] = {"ftruncate", "rename", "renameat", "renameat2",
                                      "unlink", "unlinkat", "fsync"};

// The console relay (--console ...,pty or socket=PATH) on the control
// loop: a client accepted, bytes sent without SIGPIPE (send is sendto).
constexpr const char* kConsoleRelay[] = {"accept4", "accept", "sendto"};
// The control socket (--api-socket) on the control loop: the relay's
// calls, and a request peeked at then read (recv is recvfrom); timers (the
// power key's release, a client's deadline); the footprint for "stats"
// read from /proc/self/status (an openat of an existing file). The
// client's credentials (getsockopt SO_PEERCRED) are build()'s.
constexpr const char* kControlSocket[] = {"recvfrom", "timerfd_create", "timerfd_settime",
                                          "timerfd_gettime"};
// A disk's I/O thread (hw/block/block_io.cc): the image's data calls.
// The v2 calls too: a libc may implement preadv/pwritev with them.
constexpr const char* kBlockIo[] = {"pread64", "preadv", "preadv2", "pwrite64", "pwritev", "pwritev2",
                                    "fdatasync", "fsync", "fallocate"};

// A disk's io_uring thread (hw/block/uring_worker.cc): the ring's one call
// (submitting and reaping; the ring itself is restricted to READV, WRITEV,
// FSYNC and FALLOCATE on its registered files), and block-io's calls, for
// the requests it runs with blocking calls (cache=none IN/OUT through the
// bounce buffer).
constexpr const char* kBlockUring[] = {"io_uring_enter"};

// A reboot in place (vmm/machine/machine.h, "Life cycle") on the main thread: the
// kernel and initrd read into guest RAM again (BootFile::read_at), and
// timers cancelled by the devices' resets (the PL031's alarm, virtio-rng's
// rate timer).
constexpr const char* kReboot[] = {"pread64", "timerfd_settime"};

// A vhost-user backend's socket (hw/vhost/vhost_user.cc): set-up messages
// sent with their fds (sendmsg) and replies read (recv is recvfrom), each
// awaited with poll, at DRIVER_OK and resets (vCPU threads) and at
// teardown (main). The socket is connected at start-up, before any filter.
constexpr const char* kVhostUser[] = {"sendmsg", "recvfrom", "poll", "ppoll"};

// ioctl requests, by what issues them.
constexpr unsigned long kTerminalIoctls[] = {TCGETS, TCSETS, TCSETSW, TCSETSF};
constexpr unsigned long kVcpuIoctls[] = {KVM_RUN, KVM_GET_ONE_REG, KVM_SET_ONE_REG};
constexpr unsigned long kVmRuntimeIoctls[] = {KVM_IRQ_LINE, KVM_IOEVENTFD, KVM_IRQFD};
#if defined(__aarch64__)
// A reboot in place: each vCPU's thread resets its own vCPU
// (arm64::reset_vcpu: the preferred target asked again, then
// KVM_ARM_VCPU_INIT). The vGIC's SPIs are cleared by the main thread.
constexpr unsigned long kVcpuResetIoctls[] = {KVM_ARM_PREFERRED_TARGET, KVM_ARM_VCPU_INIT};
#endif
constexpr unsigned long kTapIoctls[] = {TUNSETIFF, TUNGETIFF, TUNSETVNETHDRSZ, TUNSETOFFLOAD,
                                        SIOCGIFFLAGS, SIOCSIFFLAGS, SIOCGIFINDEX};
constexpr unsigned long kVhostIoctls[] = {
    VHOST_SET_OWNER, VHOST_GET_FEATURES, VHOST_SET_FEATURES, VHOST_SET_MEM_TABLE,
    VHOST_SET_VRING_NUM, VHOST_SET_VRING_BASE, VHOST_SET_VRING_ADDR, VHOST_SET_VRING_KICK,
    VHOST_SET_VRING_CALL, VHOST_SET_VRING_ERR, VHOST_NET_SET_BACKEND, VHOST_GET_VRING_BASE,
    VHOST_SET_VRING_BUSYLOOP_TIMEOUT};
// vhost-vsock's own (hw/vsock/virtio_vsock.cc): started at DRIVER_OK and
// stopped at a reset or a queue's stop (vCPU threads), stopped at teardown
// (main). Its VHOST_VSOCK_SET_GUEST_CID is issued once, when the device is
// made, before any thread is confined: no class has it.
constexpr unsigned long kVhostVsockIoctls[] = {VHOST_VSOCK_SET_RUNNING};

// The sockets a class creates after set-up, each pinned to its domain,
// type and protocol: whatever else a compromised thread wanted (a TCP
// connection out, a raw or packet socket, another netlink family) it
// cannot make.
struct SocketKind {
  int domain;
  int type;  // without SOCK_CLOEXEC and SOCK_NONBLOCK, which may be added
  int protocol;
};
// Interface ioctls (SIOCGIFFLAGS, SIOCSIFFLAGS, SIOCGIFINDEX) need a
// socket of any kind to be issued on: hw/net/tap.cc's control_socket().
constexpr SocketKind kInterfaceIoctlSocket{AF_INET, SOCK_DGRAM, 0};
// The tap monitor's rtnetlink socket (hw/net/tap_monitor.cc), made when a
// vCPU activates a tap-backed net device.
constexpr SocketKind kLinkMonitorSocket{AF_NETLINK, SOCK_RAW, NETLINK_ROUTE};
constexpr SocketKind kVcpuSockets[] = {kInterfaceIoctlSocket, kLinkMonitorSocket};
// The event loop re-attaches a tap that came back (its link set up) and
// reads interface flags; the monitor's socket is the vCPU's, kept.
constexpr SocketKind kDeviceSockets[] = {kInterfaceIoctlSocket};
// setsockopt(SOL_SOCKET, ...): the tap monitor's classic BPF socket filter
// (hw/net/tap_link_filter.h), attached at device activation and changed by
// the event loop when the tap goes or comes back. No eBPF (SO_ATTACH_BPF).
constexpr int kSocketFilterOptions[] = {SO_ATTACH_FILTER, SO_DETACH_FILTER};

// What a class may open after set-up. Seccomp sees openat's flags, not
// its path, so this bounds how a file is opened, not which:
//   kNothing      no open at all (a read-only one fails with EACCES,
//                 as glibc's own may; any other stops kvmmio)
//   kExisting     existing files only, never emptied: no O_CREAT, no
//                 O_TRUNC, no O_TMPFILE (vhost-net's /dev/vhost-net
//                 O_RDWR, an image reopened through /proc/self/fd for an
//                 io_uring ring, what glibc reads, e.g. sysfs)
//   kExistingOrNew  kExisting's, and a new file only with O_EXCL (the
//                 --stats temporary: an existing file, or a symbolic link
//                 planted in its place, cannot be taken over that way),
//                 still never emptied (the in-place write truncates the
//                 fd it opened at the start)
enum class Opens { kNothing, kExisting, kExistingOrNew };

struct ClassList {
  std::vector<const char*> calls;
  std::vector<unsigned long> ioctls;
  Opens opens = Opens::kNothing;
  std::vector<SocketKind> sockets;
  bool socket_filters = false;  // setsockopt kSocketFilterOptions
  bool peer_credentials = false;  // getsockopt SO_PEERCRED
};

template <typename T, size_t N>
void append(std::vector<T>& to, const T (&from)[N]) {
  to.insert(to.end(), from, from + N);
}

ClassList list_for(ThreadClass c) {
  ClassList l;
  append(l.calls, kEveryThread);
  append(l.ioctls, kTerminalIoctls);
  switch (c) {
    case ThreadClass::kVcpu:
      append(l.calls, kLoop);
      append(l.calls, kDeviceSetUp);
      l.opens = Opens::kExisting;
      append(l.sockets, kVcpuSockets);
      l.socket_filters = true;
      append(l.ioctls, kVcpuIoctls);
#if defined(__aarch64__)
      append(l.ioctls, kVcpuResetIoctls);
#endif
      append(l.ioctls, kVmRuntimeIoctls);
      append(l.ioctls, kTapIoctls);
      append(l.ioctls, kVhostIoctls);
      append(l.ioctls, kVhostVsockIoctls);
      append(l.calls, kVhostUser);
      break;
    case ThreadClass::kDevice:
      append(l.calls, kLoop);
      append(l.calls, kTapMonitor);
      append(l.calls, kRngTimer);
      append(l.sockets, kDeviceSockets);
      l.socket_filters = true;
      append(l.ioctls, kTapIoctls);
      l.ioctls.push_back(VHOST_NET_SET_BACKEND);  // vhost re-attached to a tap that came back
      break;
    case ThreadClass::kControl:
      append(l.calls, kLoop);
      append(l.calls, kStatsFile);
      append(l.calls, kConsoleRelay);
      append(l.calls, kControlSocket);
      l.opens = Opens::kExistingOrNew;
      l.peer_credentials = true;  // who a control or console client is
      // Console input raises the PL011's line, the power key the PL061's.
      l.ioctls.push_back(KVM_IRQ_LINE);
      break;
    case ThreadClass::kBlockIo:
      append(l.calls, kBlockIo);
      break;
    case ThreadClass::kBlockUring:
      append(l.calls, kBlockUring);
      append(l.calls, kBlockIo);
      break;
    case ThreadClass::kMain:
      append(l.calls, kLoop);
      append(l.calls, kStatsFile);
      l.opens = Opens::kExistingOrNew;
      append(l.ioctls, kVmRuntimeIoctls);  // teardown: ioeventfds and irqfds deassigned
      // Teardown: memory slots removed (main's regs=mirror maps each virtio
      // window's register page as a read-only slot and deletes it there).
      l.ioctls.push_back(KVM_SET_USER_MEMORY_REGION);
      // A reboot in place: the guest reloaded, devices reset, the vGIC's
      // SPIs cleared (arm64::Vgic::clear_spis).
      append(l.calls, kReboot);
      l.ioctls.push_back(KVM_SET_DEVICE_ATTR);
      append(l.ioctls, kVhostIoctls);      // teardown: vhost stopped
      append(l.ioctls, kVhostVsockIoctls);
      append(l.calls, kVhostUser);  // teardown: vrings taken back
      append(l.ioctls, kTapIoctls);
      break;
  }
  return l;
}

// --- Reporting a forbidden call (mode on) ------------------------------------
// The SIGSYS handler runs on the thread that made the call and may only
// use async-signal-safe means: the names are looked up before any filter
// is installed, the message is assembled by hand and written with write().

constexpr int kMaxNr = 1024;
const char* g_names[kMaxNr];
thread_local const char* t_class = "unconfined";

void append_str(char* buf, size_t& n, size_t cap, const char* s) {
  while (*s && n + 1 < cap) buf[n++] = *s++;
}
void append_int(char* buf, size_t& n, size_t cap, long v) {
  char digits[24];
  int d = 0;
  const bool neg = v < 0;
  unsigned long u = neg ? static_cast<unsigned long>(-v) : static_cast<unsigned long>(v);
  do digits[d++] = static_cast<char>('0' + u % 10); while ((u /= 10) && d < 23);
  if (neg && n + 1 < cap) buf[n++] = '-';
  while (d > 0 && n + 1 < cap) buf[n++] = digits[--d];
}

void append_hex(char* buf, size_t& n, size_t cap, uintptr_t v) {
  char digits[2 * sizeof v];
  int d = 0;
  do digits[d++] = "0123456789abcdef"[v & 15]; while ((v >>= 4) && d < static_cast<int>(sizeof digits));
  append_str(buf, n, cap, "0x");
  while (d > 0 && n + 1 < cap) buf[n++] = digits[--d];
}

// Where a forbidden call came from, as module+offset (addresses alone mean
// nothing under ASLR): the modules' ranges are taken when the handler is
// installed, so the handler only reads this table.
struct Module {
  uintptr_t start = 0, end = 0;
  char name[32] = {};
};
constexpr size_t kMaxModules = 32;
Module g_modules[kMaxModules];
size_t g_module_count = 0;

int add_module(dl_phdr_info* info, size_t, void*) {
  if (g_module_count == kMaxModules) return 1;
  Module& m = g_modules[g_module_count];
  m.start = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    m.start = std::min<uintptr_t>(m.start, info->dlpi_addr + ph.p_vaddr);
    m.end = std::max<uintptr_t>(m.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (m.start >= m.end) return 0;
  // The program itself has no name here: its own (a static build's libc
  // is inside it).
  const char* path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : program_invocation_short_name;
  const char* base = std::strrchr(path, '/');
  std::strncpy(m.name, base ? base + 1 : path, sizeof m.name - 1);
  // Offsets from the load address, as addr2line and objdump count them.
  m.start = info->dlpi_addr;
  ++g_module_count;
  return 0;
}

void append_place(char* buf, size_t& n, size_t cap, uintptr_t addr) {
  for (size_t i = 0; i < g_module_count; ++i) {
    const Module& m = g_modules[i];
    if (addr < m.start || addr >= m.end) continue;
    append_str(buf, n, cap, m.name);
    append_str(buf, n, cap, "+");
    append_hex(buf, n, cap, addr - m.start);
    return;
  }
  append_hex(buf, n, cap, addr);
}

void on_sigsys(int, siginfo_t* info, void* context) {
  const int nr = info->si_syscall;
  const auto* uc = static_cast<const ucontext_t*>(context);
  char msg[512];
  size_t n = 0;
  append_str(msg, n, sizeof msg, "kvmmio: error: seccomp: the ");
  append_str(msg, n, sizeof msg, t_class);
  append_str(msg, n, sizeof msg, " thread made system call ");
  append_str(msg, n, sizeof msg, nr >= 0 && nr < kMaxNr && g_names[nr] ? g_names[nr] : "?");
  append_str(msg, n, sizeof msg, " (");
  append_int(msg, n, sizeof msg, nr);
  append_str(msg, n, sizeof msg, "), which its allow-list does not have: kvmmio stops "
                                 "(--seccomp=log lists every such call instead)\n");
  // What and where, for the report of the bug: a path opened, and the call
  // with its caller's return address.
  uintptr_t path = 0, caller = 0;
#if defined(__aarch64__)
  path = uc->uc_mcontext.regs[1];
  caller = uc->uc_mcontext.regs[30];
#elif defined(__x86_64__)
  path = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSI]);
#endif
  append_str(msg, n, sizeof msg, "kvmmio: error: seccomp: the call at ");
  append_place(msg, n, sizeof msg, reinterpret_cast<uintptr_t>(info->si_call_addr));
  if (caller) {
    append_str(msg, n, sizeof msg, ", return address ");
    append_place(msg, n, sizeof msg, caller);
  }
  if (nr == SYS_openat && path) {
    // The caller's own pointer, just handed to the kernel: readable.
    append_str(msg, n, sizeof msg, ", path \"");
    const char* p = reinterpret_cast<const char*>(path);
    for (int i = 0; i < 96 && p[i] && n + 2 < sizeof msg; ++i) msg[n++] = p[i];
    append_str(msg, n, sizeof msg, "\"");
  }
  append_str(msg, n, sizeof msg, "\n");
  ssize_t ignored = ::write(STDERR_FILENO, msg, n);
  (void)ignored;
  restore_terminal_now();
  // Killed by SIGSYS: the default action, raised again; it is blocked in
  // this handler and arrives as it returns.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGSYS, &dfl, nullptr);
  ::syscall(SYS_tgkill, ::getpid(), ::syscall(SYS_gettid), SIGSYS);
}

void name_syscalls() {
  g_module_count = 0;
  ::dl_iterate_phdr(add_module, nullptr);
  for (int nr = 0; nr < kMaxNr; ++nr) {
    // The names stay for the process's life (the handler reads them).
    g_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  }
}

std::string name_of(int nr) {
  return nr >= 0 && nr < kMaxNr && g_names[nr] ? g_names[nr] : "syscall " + std::to_string(nr);
}

// --- Building a filter ------------------------------------------------------------

class Filter {
 public:
  explicit Filter(uint32_t default_action) : ctx_(seccomp_init(default_action)) {
    if (!ctx_) throw std::runtime_error("seccomp_init failed");
  }
  ~Filter() { seccomp_release(ctx_); }
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;

  void allow(const char* name) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) throw std::logic_error(std::string("seccomp: unknown system call ") + name);
    check(seccomp_rule_add(ctx_, SCMP_ACT_ALLOW, nr, 0), name);
  }
  template <typename... Args>
  void allow_if(const char* name, Args... conditions) {
    add_if(SCMP_ACT_ALLOW, name, conditions...);
  }
  // The call is not made and fails with `error`; the thread goes on.
  template <typename... Args>
  void refuse_if(int error, const char* name, Args... conditions) {
    add_if(SCMP_ACT_ERRNO(static_cast<uint32_t>(error)), name, conditions...);
  }
  scmp_filter_ctx get() const { return ctx_; }

 private:
  template <typename... Args>
  void add_if(uint32_t action, const char* name, Args... conditions) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) throw std::logic_error(std::string("seccomp: unknown system call ") + name);
    check(seccomp_rule_add(ctx_, action, nr, sizeof...(Args), conditions...), name);
  }
  static void check(int rc, const char* what) {
    if (rc < 0) throw std::system_error(-rc, std::generic_category(), std::string("seccomp rule for ") + what);
  }
  scmp_filter_ctx ctx_;
};

// An int argument's 32 bits: the kernel reads no more of the register, so
// a masked compare must not either (high bits set by a caller change
// nothing the kernel does, and must not make a call refused or allowed).
constexpr scmp_datum_t kIntBits = 0xffffffffu;

// The open flags that make a file or empty one. O_TMPFILE is spelled with
// O_DIRECTORY's bit, which an ordinary open may carry: only its own bit.
constexpr scmp_datum_t kTmpFileBit = static_cast<scmp_datum_t>(O_TMPFILE & ~O_DIRECTORY);
constexpr scmp_datum_t kMakesOrEmpties = O_CREAT | O_TRUNC | kTmpFileBit;

// openat (flags in its third argument) and x86-64's open (in its second;
// arm64 has no open, and libseccomp skips a call the architecture lacks).
// creat always truncates and openat2's flags are behind a pointer: no
// class has either (glibc's open and fopen are openat).
void allow_opens(Filter& f, Opens opens) {
  if (opens == Opens::kNothing) {
    // glibc opens files on its own, once, in whichever thread first needs
    // them: /proc/sys/vm/overcommit_memory when a thread's malloc heap
    // first shrinks (a disk's io_uring thread, after a reboot in place,
    // was killed for it). A read-only open is refused with EACCES instead
    // of stopping kvmmio: the call is not made, and glibc takes the
    // default. Any other open still stops kvmmio.
    constexpr scmp_datum_t kReadOnlyMask = O_ACCMODE | kMakesOrEmpties;
    f.refuse_if(EACCES, "openat", SCMP_A2(SCMP_CMP_MASKED_EQ, kReadOnlyMask, O_RDONLY));
    f.refuse_if(EACCES, "open", SCMP_A1(SCMP_CMP_MASKED_EQ, kReadOnlyMask, O_RDONLY));
    return;
  }
  f.allow_if("openat", SCMP_A2(SCMP_CMP_MASKED_EQ, kMakesOrEmpties, 0));
  f.allow_if("open", SCMP_A1(SCMP_CMP_MASKED_EQ, kMakesOrEmpties, 0));
  if (opens == Opens::kExisting) return;
  // O_CREAT with O_EXCL: fails on anything at the name, a symbolic link
  // included.
  constexpr scmp_datum_t kMask = kMakesOrEmpties | O_EXCL;
  constexpr scmp_datum_t kNewOnly = O_CREAT | O_EXCL;
  f.allow_if("openat", SCMP_A2(SCMP_CMP_MASKED_EQ, kMask, kNewOnly));
  f.allow_if("open", SCMP_A1(SCMP_CMP_MASKED_EQ, kMask, kNewOnly));
}

// socket(domain, type, protocol) for each kind, exactly; the type may
// carry SOCK_CLOEXEC and SOCK_NONBLOCK and no other flag.
void allow_sockets(Filter& f, const std::vector<SocketKind>& kinds) {
  constexpr scmp_datum_t kTypeBits = kIntBits & ~static_cast<scmp_datum_t>(SOCK_CLOEXEC | SOCK_NONBLOCK);
  for (const SocketKind& k : kinds)
    f.allow_if("socket", SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(k.domain)),
               SCMP_A1(SCMP_CMP_MASKED_EQ, kTypeBits, static_cast<scmp_datum_t>(k.type)),
               SCMP_A2(SCMP_CMP_EQ, static_cast<scmp_datum_t>(k.protocol)));
}

void build(Filter& f, ThreadClass c) {
  const ClassList l = list_for(c);
  for (const char* name : l.calls) f.allow(name);
  for (unsigned long request : l.ioctls) f.allow_if("ioctl", SCMP_A1(SCMP_CMP_EQ, request));
  allow_opens(f, l.opens);
  allow_sockets(f, l.sockets);
  if (l.socket_filters) {
    for (int option : kSocketFilterOptions)
      f.allow_if("setsockopt", SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(SOL_SOCKET)),
                 SCMP_A2(SCMP_CMP_EQ, static_cast<scmp_datum_t>(option)));
  }
  if (l.peer_credentials)
    f.allow_if("getsockopt", SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(SOL_SOCKET)),
               SCMP_A2(SCMP_CMP_EQ, static_cast<scmp_datum_t>(SO_PEERCRED)));
  // Signals (vCPU kicks, a fatal signal raised again, abort) go to this
  // process's threads only: root's tgkill reaches any process.
  f.allow_if("tgkill", SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(::getpid())));
  // Memory never becomes executable after set-up.
  f.allow_if("mmap", SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  f.allow_if("mprotect", SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
}

// Log mode: the filter with a user-notification listener, loaded by hand
// (libseccomp keeps one listener per process; each thread needs its own).
UniqueFd load_with_listener(Filter& f) {
  UniqueFd bpf(::memfd_create("kvmmio-seccomp", MFD_CLOEXEC));
  if (!bpf) throw_errno("memfd_create for the seccomp filter");
  if (const int rc = seccomp_export_bpf(f.get(), bpf.get()); rc < 0)
    throw std::system_error(-rc, std::generic_category(), "seccomp_export_bpf");
  const off_t size = ::lseek(bpf.get(), 0, SEEK_END);
  std::vector<sock_filter> prog(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(bpf.get(), prog.data(), static_cast<size_t>(size), 0) != size) throw_errno("reading the seccomp filter");
  sock_fprog fprog{static_cast<unsigned short>(prog.size()), prog.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) throw_errno("PR_SET_NO_NEW_PRIVS");
  UniqueFd listener(static_cast<int>(
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog)));
  if (!listener) throw_errno("seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER)");
  return listener;
}

}  // namespace

const char* to_string(SeccompMode mode) {
  switch (mode) {
    case SeccompMode::kOn: return "on";
    case SeccompMode::kLog: return "log";
    case SeccompMode::kOff: return "off";
  }
  return "?";
}

const char* to_string(ThreadClass c) {
  switch (c) {
    case ThreadClass::kMain: return "main";
    case ThreadClass::kVcpu: return "vcpu";
    case ThreadClass::kDevice: return "device";
    case ThreadClass::kControl: return "control";
    case ThreadClass::kBlockIo: return "block-io";
    case ThreadClass::kBlockUring: return "block-uring";
  }
  return "?";
}

Seccomp::Seccomp(SeccompMode mode) : mode_(mode) {
  if (mode_ == SeccompMode::kOff) return;
  name_syscalls();
  if (mode_ == SeccompMode::kOn) {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGSYS, &sa, nullptr) != 0) throw_errno("sigaction SIGSYS");
  } else {
    logger_ = std::make_unique<EventLoop>("seccomp-log");
  }
}

Seccomp::~Seccomp() {
  // Before the loop goes; not under the mutex, which a running callback
  // may be waiting for while the removal waits for it.
  std::map<int, EventLoop::Registration> listeners;
  {
    std::lock_guard lock(mutex_);
    listeners.swap(listeners_);
  }
}

void Seccomp::confine_this_thread(ThreadClass thread_class) {
  if (mode_ == SeccompMode::kOff) return;
  t_class = to_string(thread_class);
  Filter f(mode_ == SeccompMode::kOn ? SCMP_ACT_TRAP : SCMP_ACT_NOTIFY);
  build(f, thread_class);
  if (mode_ == SeccompMode::kOn) {
    if (const int rc = seccomp_load(f.get()); rc < 0)
      throw std::system_error(-rc, std::generic_category(), "seccomp_load");
    return;
  }
  UniqueFd listener = load_with_listener(f);
  const int fd = listener.get();
  std::lock_guard lock(mutex_);
  listeners_[fd] = logger_->watch(fd, [this, fd, thread_class, owned = std::make_shared<UniqueFd>(
                                                                   std::move(listener))] {
    on_notification(fd, thread_class);
  });
}

uint64_t Seccomp::logged_calls() const {
  std::lock_guard lock(mutex_);
  return logged_;
}

// The logging thread: a confined thread made a call its list lacks and
// waits until this lets it go on.
void Seccomp::on_notification(int listener, ThreadClass thread_class) {
  pollfd p{listener, POLLIN, 0};
  if (::poll(&p, 1, 0) != 1 || !(p.revents & POLLIN)) {
    // The thread is gone (the listener hangs up): stop watching.
    std::lock_guard lock(mutex_);
    listeners_.erase(listener);
    return;
  }
  seccomp_notif req;
  std::memset(&req, 0, sizeof req);
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return;  // the caller went away
  seccomp_notif_resp resp;
  std::memset(&resp, 0, sizeof resp);
  resp.id = req.id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  bool first;
  {
    std::lock_guard lock(mutex_);
    ++logged_;
    first = reported_.emplace(thread_class, req.data.nr).second;
  }
  if (first)
    KVMMIO_LOG_WARN("seccomp (log mode): the %s thread made system call %s (%d), which its allow-list "
                    "does not have; allowed", to_string(thread_class), name_of(req.data.nr).c_str(),
                    req.data.nr);
  ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

}  // namespace kvmmio::vmm
