// SPDX-License-Identifier: BSD-2-Clause
// Console plumbing: bytes from an input fd reach the UART's RX FIFO in
// order and none are dropped when the guest reads slowly; Ctrl-A escapes;
// end of input; a regular file as input; output to an fd.
#include "vmm/console/console.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "../virtio/harness.h"
#include "../virtio/thread_sleeps.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/console/pl011.h"
#include "test_files.h"

namespace kvmmio::vmm {
namespace {

using namespace std::chrono_literals;
using console::Pl011;
using virtio::test::eventually;
using virtio::test::voluntary_sleeps;

class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  void write(const std::string& s) {
    ASSERT_EQ(::write(fds_[1], s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void close_write() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }
  void close_read() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    fds_[0] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

// Reads the UART as a guest would (FR.RXFE, then DR) until `n` bytes came
// or eventually()'s limit passed.
std::string guest_reads(Pl011& uart, size_t n) {
  std::string got;
  eventually([&] {
    while (got.size() < n) {
      uint8_t buf[4] = {};
      uart.mmio_read(Pl011::kFR, buf);
      if (buf[0] & Pl011::kFrRxFifoEmpty) return false;  // eventually() polls again
      uart.mmio_read(Pl011::kDR, buf);
      got += static_cast<char>(buf[0]);
    }
    return true;
  });
  return got;
}

class ConsoleTest : public testing::Test {
 protected:
  ConsoleTest() {
    const uint8_t fifo_on[4] = {Pl011::kLcrFifoEnable, 0, 0, 0};
    uart.mmio_write(Pl011::kLCR_H, fifo_on);
  }
  Pl011 uart{nullptr, nullptr};
  EventLoop loop;
};

TEST_F(ConsoleTest, InputReachesTheGuestInOrderWithoutDrops) {
  Pipe in;
  ConsoleInput console(loop, in.read_fd(), uart, false, nullptr);
  std::string text;
  for (int i = 0; i < 3000; ++i) text += static_cast<char>('a' + i % 26);
  in.write(text);  // far more than the 32-byte FIFO
  EXPECT_EQ(guest_reads(uart, text.size()), text);
  EXPECT_EQ(uart.counters().rx_bytes, text.size());
}

TEST_F(ConsoleTest, CtrlAEscapesOnATerminal) {
  Pipe in;
  std::atomic<int> quits{0};
  ConsoleInput console(loop, in.read_fd(), uart, true, [&] { ++quits; });
  in.write(
      "a\x01\x01"
      "b\x01"
      "c");  // Ctrl-A Ctrl-A sends one; Ctrl-A c sends both
  EXPECT_EQ(guest_reads(uart, 5),
            "a\x01"
            "b\x01"
            "c");
  EXPECT_EQ(quits, 0);
  in.write("d\x01x");
  EXPECT_EQ(guest_reads(uart, 1), "d");
  EXPECT_TRUE(eventually([&] { return quits != 0; }));
  EXPECT_EQ(quits, 1);
}

// A guest that never reads its input: on a terminal the VMM goes on
// reading, so Ctrl-A x still stops it; the keys that no longer fit are
// dropped and counted.
TEST_F(ConsoleTest, CtrlAXGetsThroughWhenTheGuestReadsNothing) {
  Pipe in;
  std::atomic<int> quits{0};
  ConsoleInput console(loop, in.read_fd(), uart, true, [&] { ++quits; });
  in.write(std::string(3 * ConsoleInput::kMaxPending, 'k'));
  in.write("\x01x");
  EXPECT_TRUE(eventually([&] { return quits != 0; }));
  EXPECT_EQ(quits.load(), 1);
  // The UART's FIFO took 32 bytes, kMaxPending wait, the rest was dropped.
  EXPECT_EQ(console.input_dropped(), 3 * ConsoleInput::kMaxPending - ConsoleInput::kMaxPending - 32);
}

// From a pipe (no terminal) nothing is dropped: reading stops while the
// buffer is full and resumes as the guest reads.
TEST_F(ConsoleTest, APipeIsNeverDroppedPastTheBuffer) {
  Pipe in;
  ConsoleInput console(loop, in.read_fd(), uart, false, nullptr);
  std::string text;
  for (size_t i = 0; i < 3 * ConsoleInput::kMaxPending; ++i) text += static_cast<char>('a' + i % 26);
  in.write(text);
  EXPECT_EQ(guest_reads(uart, text.size()), text);
  EXPECT_EQ(console.input_dropped(), 0u);
}

// A regular file as input is read as the sink drains, one share per turn
// of the loop: another fd ready meanwhile runs after exactly one share.
TEST_F(ConsoleTest, ARegularFileIsReadOneSharePerTurnOfTheLoop) {
  struct TakeAll final : ConsoleInputSink {
    size_t receive(std::span<const uint8_t> bytes) override { return taken += bytes.size(), bytes.size(); }
    void set_rx_space_callback(std::function<void()>) override {}
    std::atomic<size_t> taken{0};
  } sink;
  test::TempDir dir;
  test::write_file(dir.file("input"), std::vector<uint8_t>(4 * ConsoleInput::kFileBytesPerDispatch, 'f'));
  const int fd = ::open(dir.file("input").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EventFd other;
  std::atomic<size_t> seen{0};
  auto w = loop.watch_eventfd(other.fd(), [&](uint64_t) { seen = sink.taken.load(); });
  {
    virtio::test::LoopGate gate(loop);
    gate.close();
    ConsoleInput console(loop, fd, sink, false, nullptr);  // starts reading on its first turn
    other.signal();
    gate.open();
    loop.flush();
    EXPECT_EQ(seen.load(), ConsoleInput::kFileBytesPerDispatch);
    EXPECT_TRUE(eventually([&] { return console.at_eof(); }));
    EXPECT_EQ(sink.taken.load(), 4 * ConsoleInput::kFileBytesPerDispatch);
  }
  ::close(fd);
}

TEST_F(ConsoleTest, EscapesAreNotInterpretedWithoutATerminal) {
  Pipe in;
  std::atomic<int> quits{0};
  ConsoleInput console(loop, in.read_fd(), uart, false, [&] { ++quits; });
  in.write("\x01x");
  EXPECT_EQ(guest_reads(uart, 2), "\x01x");
  EXPECT_EQ(quits, 0);
}

TEST_F(ConsoleTest, EndOfInputIsNoticedAndTheVmRunsOn) {
  Pipe in;
  ConsoleInput console(loop, in.read_fd(), uart, false, nullptr);
  in.write("bye");
  in.close_write();
  EXPECT_EQ(guest_reads(uart, 3), "bye");
  EXPECT_TRUE(eventually([&] { return console.at_eof(); }));
  EXPECT_TRUE(console.at_eof());
}

TEST_F(ConsoleTest, ARegularFileIsFedAsTheGuestReads) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>('0' + i % 10);
  test::write_file(dir.file("input"), std::vector<uint8_t>(text.begin(), text.end()));
  const int fd = ::open(dir.file("input").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  {
    ConsoleInput console(loop, fd, uart, false, nullptr);
    EXPECT_EQ(guest_reads(uart, text.size()), text);
  }
  ::close(fd);
}

TEST_F(ConsoleTest, DevNullIsJustEndOfInput) {
  // epoll cannot watch /dev/null (the platform's scenarios run with it as stdin).
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  {
    ConsoleInput console(loop, fd, uart, false, nullptr);
    EXPECT_TRUE(eventually([&] { return console.at_eof(); }));
    EXPECT_TRUE(console.at_eof());
  }
  ::close(fd);
}

TEST(ConsoleOutput, WritesBytesAndSurvivesAClosedReader) {
  ::signal(SIGPIPE, SIG_IGN);  // as kvmmio run does
  Pipe out;
  ConsoleOutput console(out.write_fd());
  for (char c : std::string("ok\r\n")) console.put(static_cast<uint8_t>(c));
  char buf[8] = {};
  ASSERT_EQ(::read(out.read_fd(), buf, sizeof buf), 4);
  EXPECT_EQ(std::string(buf, 4), "ok\r\n");
  out.close_read();
  console.put('x');  // EPIPE: dropped and logged once, not fatal
  console.put('y');
}

TEST(ConsoleOutput, AWriterBlockedOnAStalledReaderGivesUpWhenStopped) {
  Pipe out;
  ConsoleOutput console(out.write_fd());
  std::atomic<bool> returned{false};
  std::atomic<pid_t> writer_tid{0};
  std::thread writer([&] {
    writer_tid = ::gettid();
    for (int i = 0; i < 1 << 20; ++i) console.put('z');  // far more than a pipe holds
    returned = true;
  });
  ASSERT_TRUE(eventually([&] { return writer_tid != 0; }));
  // The writer sleeps only once the pipe is full (until then poll finds
  // room at once): a few sleeps are the sign that it waits for the reader,
  // where one that dropped output or gave up would have returned.
  const long sleeps0 = voluntary_sleeps(writer_tid);
  EXPECT_TRUE(eventually([&] { return returned || voluntary_sleeps(writer_tid) >= sleeps0 + 3; }));
  EXPECT_FALSE(returned);  // nobody reads: it waits
  console.stop_waiting();
  writer.join();  // within a poll step
  EXPECT_TRUE(returned);
}

}  // namespace
}  // namespace kvmmio::vmm
