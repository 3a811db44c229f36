// SPDX-License-Identifier: BSD-2-Clause
// The guest console on the VMM's stdin/stdout:
//   ConsoleOutput  the PL011's TX sink: bytes to an fd (stdout), as they come
//                  (virtio-console writes its output itself, without waiting)
//   ConsoleInput   an fd (stdin) read on an event loop (the machine's
//                  control loop, which runs no device callbacks) into the
//                  console device's receive side (a ConsoleInputSink: the
//                  PL011's RX FIFO or virtio-console's receiveq), holding
//                  back what does not fit until the guest reads: up to
//                  kMaxPending bytes. From a pipe or file no input is
//                  dropped: past kMaxPending, reading stops until the guest
//                  makes room. On a terminal, the Ctrl-A escapes: Ctrl-A x
//                  stops the VM, Ctrl-A Ctrl-A sends one Ctrl-A; there the
//                  terminal is read even when kMaxPending bytes wait, so
//                  Ctrl-A x works whatever the guest does, and keys typed
//                  beyond kMaxPending are dropped and counted
//                  (input_dropped()).
// Raw mode is RawTerminal's job.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "kvmmio/console/input_sink.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"

namespace kvmmio::vmm {

class ConsoleOutput {
 public:
  explicit ConsoleOutput(int fd) : fd_(fd) {}
  // Writes one byte, waiting while the fd is full (the guest's UART is
  // slowed to the reader's pace) and retrying after signals. When the fd is
  // gone (EPIPE, closed) the byte is dropped and the problem logged once.
  void put(uint8_t byte);
  // From now on, a put() that would wait gives up instead: a vCPU stuck
  // writing to a stalled pipe must still stop with the machine.
  void stop_waiting() { stopping_ = true; }

 private:
  int fd_;
  std::atomic<bool> broken_{false};
  std::atomic<bool> stopping_{false};
};

class ConsoleInput {
 public:
  static constexpr uint8_t kEscape = 0x01;  // Ctrl-A
  static constexpr size_t kMaxPending = 4096;
  // A regular file is read as the sink drains, at most this many bytes per
  // turn of the loop.
  static constexpr size_t kFileBytesPerDispatch = 16 * 1024;

  // Watches `fd` on `loop` (or, for a regular file, reads it as the sink
  // drains) and feeds `sink`, which must outlive this object. `escapes`:
  // interpret Ctrl-A sequences (stdin is a terminal); `on_quit` runs on
  // Ctrl-A x, on the loop thread.
  ConsoleInput(EventLoop& loop, int fd, ConsoleInputSink& sink, bool escapes,
               std::function<void()> on_quit);
  ~ConsoleInput();
  ConsoleInput(const ConsoleInput&) = delete;
  ConsoleInput& operator=(const ConsoleInput&) = delete;

  bool at_eof() const { return eof_; }
  // Terminal input dropped because kMaxPending bytes already waited.
  uint64_t input_dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  void on_readable();
  void on_sink_space();
  void read_some();
  void take(const uint8_t* data, size_t n);
  void put(uint8_t c);
  void flush();
  void watch_input(bool on);

  EventLoop& loop_;
  int fd_;
  ConsoleInputSink& sink_;
  bool escapes_;
  std::function<void()> on_quit_;
  bool pollable_ = false;  // epoll cannot watch regular files or /dev/null
  std::atomic<bool> eof_{false};
  bool after_escape_ = false;
  std::vector<uint8_t> pending_;
  std::atomic<uint64_t> dropped_{0};
  EventFd space_;  // the sink made room
  // Last: dropped first, so no callback runs on a half-destroyed object.
  EventLoop::Registration space_watch_;
  EventLoop::Registration input_watch_;
};

}  // namespace kvmmio::vmm
