// SPDX-License-Identifier: BSD-2-Clause
// Seccomp: kvmmio confines each of its threads to the system calls its
// class of thread makes once the machine is set up (libseccomp filters,
// one per thread, installed by the thread itself; docs/security.md).
//
// Thread classes and what their allow-lists are for:
//   main     waits for the stop, then tears down: vCPU kicks (tgkill),
//            ioeventfd/irqfd deassignment, vhost stop, the --stats file,
//            the terminal; a reboot in place (devices reset as on
//            teardown, the vGIC's SPIs cleared, the kernel and initrd read
//            into guest RAM again)
//   vcpu     KVM_RUN and trapped MMIO: register accesses, so device
//            activation too (vhost-net opened and set up, tap settings,
//            ioeventfds assigned, watches and eventfds made); its own
//            vCPU reset for a reboot in place (KVM_ARM_VCPU_INIT again)
//   device   the event loop: polled notifies, the tap, the relay, console
//            output, the tap monitor (netlink, interface ioctls, re-attach),
//            virtio-rng's rate timer (getrandom is every class's)
//   control  the control loop: signals, console input (the PL011's
//            interrupt line), --stats snapshots, the console relay, the
//            control socket and the power key (the PL061's line, a timer)
//   block-io a disk's I/O thread: positioned reads and writes of its image,
//            fdatasync, fallocate (discard, write zeroes); completions
//            (eventfd writes) and, after a pause at the in-flight bound,
//            the queue's drain, which only touches guest memory
//   block-uring a disk's io_uring thread: io_uring_enter (the ring is
//            restricted to READV/WRITEV/FSYNC/FALLOCATE on the image and
//            its wake-up eventfd), block-io's calls (cache=none IN/OUT
//            run with blocking calls there), completions as block-io's
// Every list allows the calls any thread makes (memory management without
// PROT_EXEC, futexes, clocks, signal return, exit) and a fatal-signal
// path (the terminal restored, the signal raised again). ioctl is allowed
// for the listed request numbers only; mmap and mprotect never with
// PROT_EXEC; socket only for the (domain, type, protocol) a class makes
// (vcpu: an AF_INET datagram socket for interface ioctls and the tap
// monitor's NETLINK_ROUTE socket; device: the former; no other class);
// openat only on vcpu (existing files: no O_CREAT, O_TRUNC, O_TMPFILE),
// control and main (a new file only with O_CREAT|O_EXCL, nothing
// truncated) threads; clone, execve, ptrace, mount, bpf, ... for no
// thread.
//
// Modes (--seccomp):
//   on   a call outside the thread's list is not made: SIGSYS, and kvmmio
//        says which thread made which call, then ends as killed by SIGSYS
//        (exit status 159)
//   log  the call is made, and kvmmio says once per thread class and call
//        which it was (a user-notification listener on a logging thread of
//        its own, which is not confined): for finding what a list lacks
//   off  no filter
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "kvmmio/base/event_loop.h"

namespace kvmmio::vmm {

enum class SeccompMode { kOn, kLog, kOff };
const char* to_string(SeccompMode mode);

enum class ThreadClass { kMain, kVcpu, kDevice, kControl, kBlockIo, kBlockUring };
const char* to_string(ThreadClass thread_class);

class Seccomp {
 public:
  // kOn installs the SIGSYS reporter; kLog starts the logging thread.
  // Construct it before any filter is installed.
  explicit Seccomp(SeccompMode mode);
  ~Seccomp();
  Seccomp(const Seccomp&) = delete;
  Seccomp& operator=(const Seccomp&) = delete;

  SeccompMode mode() const { return mode_; }

  // Installs `thread_class`'s filter on the calling thread (nothing with
  // kOff). Throws std::system_error if the kernel refuses it.
  void confine_this_thread(ThreadClass thread_class);

  // Log mode: calls reported so far (all of them, not only the printed).
  uint64_t logged_calls() const;

 private:
  void on_notification(int listener, ThreadClass thread_class);

  SeccompMode mode_;
  // Log mode: the listeners, one per confined thread, read on a thread of
  // their own.
  mutable std::mutex mutex_;
  std::map<int, EventLoop::Registration> listeners_;
  std::set<std::pair<ThreadClass, int>> reported_;  // printed once each
  uint64_t logged_ = 0;
  std::unique_ptr<EventLoop> logger_;  // last: its thread stops first
};

}  // namespace kvmmio::vmm
