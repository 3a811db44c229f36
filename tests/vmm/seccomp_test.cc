// SPDX-License-Identifier: BSD-2-Clause
// Confinement, proved in child processes (a filter cannot be taken back):
// each thread class's filter loads; a call outside it stops the process as
// killed by SIGSYS with a message naming the thread class and the call;
// in log mode the call is made and named; the privilege drop leaves no
// capability and no way back; the process is not dumpable.
#include "vmm/process/seccomp.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <linux/kvm.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "../block/block_machine.h"
#include "../net/link_control.h"
#include "../virtio/driver_ring.h"
#include "../virtio/mmio_driver.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_fd.h"
#include "fake_vm_control.h"
#include "kvmmio/gpio/pl061.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/tap_monitor.h"
#include "kvmmio/rng/virtio_rng.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "vmm/console/console_relay.h"
#include "vmm/control/control_server.h"
#include "vmm/process/unix_socket.h"
#include "vmm/cli/options.h"
#include "vmm/process/output_file.h"
#include "vmm/process/privileges.h"
#include "test_files.h"

namespace kvmmio::vmm {
namespace {

constexpr ThreadClass kClasses[] = {ThreadClass::kMain, ThreadClass::kVcpu, ThreadClass::kDevice,
                                    ThreadClass::kControl, ThreadClass::kBlockIo,
                                    ThreadClass::kBlockUring};

TEST(SeccompDeathTest, EveryThreadClassLoadsAndAllowsItsEverydayCalls) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (ThreadClass c : kClasses) {
    SCOPED_TRACE(to_string(c));
    EXPECT_EXIT(
        {
          Seccomp s(SeccompMode::kOn);
          EventFd e;  // made before the filter, as every fd is
          std::vector<char> big(8 << 20, 'x');  // mmap and munmap under the filter below
          s.confine_this_thread(c);
          e.signal(2);
          if (e.take() != 2u) _exit(10);
          std::vector<char> more(8 << 20, 'y');
          if (more[12345] != 'y' || big[1] != 'x') _exit(11);
          if (::write(STDERR_FILENO, "confined\n", 9) != 9) _exit(12);
          _exit(0);
        },
        testing::ExitedWithCode(0), "confined");
  }
}

// Installs `c`'s filter on `loop`'s thread, as the Machine does.
void confine_loop_thread(Seccomp& s, EventLoop& loop, ThreadClass c) {
  EventFd go;
  auto once = loop.watch_eventfd(go.fd(), [&](uint64_t) { s.confine_this_thread(c); });
  go.signal();
  loop.flush();
}

// The pty and socket consoles' relay runs on the control loop: a client
// accepted, output sent to it, all under the control thread's filter.
TEST(SeccompDeathTest, TheConsoleRelayRunsUnderTheControlFilter) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  const std::string path = dir.file("console.sock");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        ConsoleRelay relay(ConsoleDestination{ConsoleDestination::Kind::kSocket, path});
        EventLoop control("control");
        confine_loop_thread(s, control, ThreadClass::kControl);
        relay.start(control);
        UniqueFd client = connect_unix_socket(path);
        if (!client) _exit(10);
        // Until the relay has taken the client, output is dropped: resend.
        char c = 0;
        for (int i = 0; i < 5000 && ::recv(client.get(), &c, 1, MSG_DONTWAIT) != 1; ++i) {
          if (::send(relay.device_fd(), "k", 1, MSG_NOSIGNAL) != 1) _exit(11);
          ::usleep(1000);
        }
        if (c != 'k') _exit(12);
        relay.stop();
        if (::write(STDERR_FILENO, "relayed\n", 8) != 8) _exit(13);
        _exit(0);
      },
      testing::ExitedWithCode(0), "relayed");
}

// The control socket runs on the control loop too: clients accepted,
// requests peeked at and read, stats with the footprint from /proc/self,
// the power key pressed and released by its timer, all under the control
// thread's filter.
TEST(SeccompDeathTest, TheControlSocketRunsUnderTheControlFilter) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  const std::string path = dir.file("api.sock");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        ControlServer server(path);
        EventLoop control("control");
        gpio::Pl061 gpio([](bool) {});
        PowerKey key(gpio, 3, control);
        test::FakeVmControl vm;
        vm.measure_footprint_too = true;
        vm.power_key = &key;
        confine_loop_thread(s, control, ThreadClass::kControl);
        server.start(control, vm);
        UniqueFd client = connect_unix_socket(path);
        if (!client) _exit(10);
        const std::string requests =
            "{\"cmd\":\"stats\"}\n{\"cmd\":\"pause\"}\n{\"cmd\":\"shutdown\"}\nbad\n{\"cmd\":\"quit\"}\n";
        if (::send(client.get(), requests.data(), requests.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(requests.size())) _exit(11);
        std::string answers;
        char buf[4096];
        while (std::count(answers.begin(), answers.end(), '\n') < 5) {
          const ssize_t r = ::read(client.get(), buf, sizeof buf);
          if (r <= 0) _exit(12);
          answers.append(buf, static_cast<size_t>(r));
        }
        if (answers.find("\"threads\":") == std::string::npos || vm.quits != 1) _exit(13);
        // Pressed, then released by the timer (100 ms) on the control loop.
        for (int i = 0; i < 5000 && gpio.counters().input_changes < 2; ++i) ::usleep(1000);
        if (gpio.counters().input_changes != 2) _exit(14);
        server.stop();
        if (::write(STDERR_FILENO, "served\n", 7) != 7) _exit(15);
        _exit(0);
      },
      testing::ExitedWithCode(0), "served");
}

// A disk's I/O thread confined as block-io serves every request type, with
// the completions and the in-flight pause (its drain) on that thread. With
// several queues, the requests go round them: each queue's thread confines
// itself. Runs in the death test's child; exits 0 when every status is
// right.
[[noreturn]] void serve_every_request_type_confined(const block::test::TempDir& dir, const std::string& image,
                                                   block::EngineChoice engine, unsigned queues = 1) {
  Seccomp s(SeccompMode::kOn);
  block::DiskOptions o;
  o.path = image;
  o.serial = "confined";
  o.engine = engine;
  block::BlockDeviceOptions d;
  d.on_io_thread_start = [&s] { s.confine_this_thread(ThreadClass::kBlockIo); };
  d.on_uring_thread_start = [&s] { s.confine_this_thread(ThreadClass::kBlockUring); };
  d.queues = queues;
  int status = 0;
  {
    block::test::BlockMachine m(o, d);
    m.bring_up();
    const block::spec::DiscardRange range{64, 8, 0};
    m.memory.write(block::test::BlockMachine::data_at(3), &range, sizeof range);
    m.memory.write(block::test::BlockMachine::data_at(4), &range, sizeof range);
    m.request(0, block::spec::kTOut, 0, 4096, false);
    // Across queues nothing is ordered: there the write completes before
    // the rest is sent.
    const unsigned waited = queues > 1 ? 1 : 0;
    if (waited && !m.used(0)) status = 10;
    m.request(1, block::spec::kTIn, 0, 4096, true, 1 % queues);
    m.request(2, block::spec::kTFlush, 0, 0, false, 2 % queues);
    m.request(3, block::spec::kTDiscard, 0, sizeof range, false, 3 % queues);
    m.request(4, block::spec::kTWriteZeroes, 0, sizeof range, false, 4 % queues);
    m.request(5, block::spec::kTGetId, 0, 20, true, 5 % queues);
    for (unsigned i = waited; i < 6 && status == 0; ++i)
      if (!m.used(i % queues)) status = 10;
    for (unsigned slot = 0; slot < 6 && status == 0; ++slot) {
      const bool offered = slot == 3   ? m.device->disk().can_discard()
                           : slot == 4 ? m.device->disk().can_write_zeroes()
                                       : true;
      if (m.status(slot) != (offered ? block::spec::kSOk : block::spec::kSUnsupp)) status = 20 + slot;
    }
  }
  // _exit skips the destructors: this process's own image goes here (only
  // the I/O thread is confined).
  ::unlink(image.c_str());
  ::rmdir(dir.path.c_str());
  if (status == 0 && ::write(STDERR_FILENO, "served\n", 7) != 7) status = 12;
  _exit(status);
}

TEST(SeccompDeathTest, TheBlockIoClassServesEveryRequestType) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const block::test::TempDir dir;
  const std::string image = dir.image("disk.img", 1 << 20);
  EXPECT_EXIT(serve_every_request_type_confined(dir, image, block::EngineChoice::kThreads),
              testing::ExitedWithCode(0), "served");
}

// The same on the io_uring engine, its thread confined as block-uring.
TEST(SeccompDeathTest, TheBlockUringClassServesEveryRequestType) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const block::test::TempDir dir;
  const std::string image = dir.image("disk.img", 1 << 20);
  EXPECT_EXIT(serve_every_request_type_confined(dir, image, block::EngineChoice::kIoUring),
              testing::ExitedWithCode(0), "served");
}

// Several queues: each queue's engine thread confines itself, on either
// engine, and serves what its queue gets.
TEST(SeccompDeathTest, EveryQueuesThreadConfinesItself) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (block::EngineChoice engine : {block::EngineChoice::kThreads, block::EngineChoice::kIoUring}) {
    const block::test::TempDir dir;
    const std::string image = dir.image("disk.img", 1 << 20);
    EXPECT_EXIT(serve_every_request_type_confined(dir, image, engine, 4), testing::ExitedWithCode(0), "served")
        << (engine == block::EngineChoice::kThreads ? "threads" : "io_uring");
  }
}

// block-uring allows the ring's call, not the set-up of another ring.
TEST(SeccompDeathTest, TheBlockUringClassRefusesANewRing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kBlockUring);
        io_uring_params p{};
        ::syscall(__NR_io_uring_setup, 4, &p);
        _exit(0);  // not reached
      },
      testing::KilledBySignal(SIGSYS), "seccomp: the block-uring thread made system call io_uring_setup");
}

// The tap monitor filters its netlink socket (setsockopt SO_ATTACH_FILTER)
// when a vCPU activates the device, and again on the event loop when the
// tap is removed (any interface) and comes back (its new index): under the
// vcpu and device filters.
[[noreturn]] void follow_a_tap_confined(const char* name) {
  Seccomp s(SeccompMode::kOn);
  net::Tap tap(name);
  EventLoop loop("evloop");
  DeviceLock lock;
  confine_loop_thread(s, loop, ThreadClass::kDevice);
  std::atomic<int> removed{0};
  std::atomic<int> appeared{0};
  std::unique_ptr<net::TapMonitor> monitor;
  std::thread vcpu([&] {
    s.confine_this_thread(ThreadClass::kVcpu);
    monitor = std::make_unique<net::TapMonitor>(loop, lock, name, [&](net::TapMonitor::Event e) {
      if (e == net::TapMonitor::Event::kRemoved) ++removed;
      if (e == net::TapMonitor::Event::kAppeared) ++appeared;
    });
  });
  vcpu.join();
  ::kvmmio::test::delete_link(tap.ifindex());
  for (int i = 0; i < 30000 && removed == 0; ++i) ::usleep(1000);
  if (removed != 1) _exit(10);
  ::kvmmio::test::create_persistent_tap(name);
  for (int i = 0; i < 30000 && appeared == 0; ++i) ::usleep(1000);
  if (appeared != 1) _exit(11);
  monitor.reset();
  if (::write(STDERR_FILENO, "monitored\n", 10) != 10) _exit(12);
  _exit(0);
}

TEST(SeccompDeathTest, TheTapMonitorFiltersItsSocketUnderTheVcpuAndDeviceFilters) {
  if (::geteuid() != 0 || ::access("/dev/net/tun", R_OK | W_OK) != 0)
    GTEST_SKIP() << "needs root and /dev/net/tun to make a tap";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ::kvmmio::test::LinkCleanup cleanup("kvmsctap0");  // the re-created tap is persistent
  EXPECT_EXIT(follow_a_tap_confined("kvmsctap0"), testing::ExitedWithCode(0), "monitored");
}

// virtio-rng: its activation (the rate bound's timerfd made, its watches)
// and a request beyond the bound (the timer armed) on a vCPU thread, the
// timer's resumptions (read, getrandom, the timer armed again) on the
// event loop, and the reset that closes the timer: under the vcpu and
// device filters.
TEST(SeccompDeathTest, TheEntropyDeviceRunsUnderTheVcpuAndDeviceFilters) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        constexpr uint64_t kRam = 0x40000000;
        Seccomp s(SeccompMode::kOn);
        GuestMemory memory;
        memory.add_ram(kRam, 1 << 20);
        EventLoop loop("evloop");
        EventFd irq;
        rng::VirtioRng device(memory, loop, {.bytes_per_second = 100000, .burst_bytes = 64});
        virtio::TransportOptions t;
        t.notify = virtio::NotifyMode::kTrap;
        t.regs = virtio::RegsMode::kTrap;
        virtio::MmioTransport transport(
            device, virtio::TransportEnv{.memory = memory, .irq = irq, .base = 0x0a000000, .loop = &loop, .name = "rng"},
            t);
        virtio::test::MmioDriver driver(transport);
        confine_loop_thread(s, loop, ThreadClass::kDevice);
        int served = 0;
        std::thread vcpu([&] {
          s.confine_this_thread(ThreadClass::kVcpu);
          if (!driver.probe() || !driver.initialize(virtio::feature::bit(virtio::feature::kVersion1))) return;
          const auto layout = driver.setup_queue(0, kRam + 0x10000, 8);
          if (!layout) return;
          virtio::test::DriverRing ring(memory, *layout);
          driver.driver_ok();
          // The first empties the bucket, the second waits (armed here),
          // the third waits behind it (armed on the loop).
          for (unsigned i = 0; i < 3; ++i) {
            const virtio::test::Buffer b[] = {{kRam + 0x20000 + i * 0x1000, 64, true}};
            ring.add(b);
            ring.publish();
            driver.notify(0);
          }
          for (int i = 0; i < 10000 && served < 3; ++i) {
            while (const auto e = ring.take_used()) served += e->len == 64;
            if (served < 3) ::usleep(1000);
          }
          driver.reset();
        });
        vcpu.join();
        if (served != 3 || device.counters().throttled < 1) _exit(10);
        if (::write(STDERR_FILENO, "served\n", 7) != 7) _exit(11);
        _exit(0);
      },
      testing::ExitedWithCode(0), "served");
}

TEST(SeccompDeathTest, AForbiddenCallStopsKvmmioNamingTheThreadAndTheCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kDevice);
        ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
        _exit(0);  // not reached
      },
      testing::KilledBySignal(SIGSYS), "seccomp: the device thread made system call ptrace \\([0-9]+\\)");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kVcpu);
        ::syscall(SYS_execve, "/bin/true", nullptr, nullptr);
        _exit(0);
      },
      testing::KilledBySignal(SIGSYS), "the vcpu thread made system call execve");
}

// A forbidden open says which file and where the call was made (module and
// offset: libc, or this program where it is linked statically), so one
// failed run is enough to find the caller.
TEST(SeccompDeathTest, AForbiddenOpenNamesItsPathAndPlace) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kBlockUring);
        ::open("/kvmmio-no-such-dir/file", O_WRONLY | O_CREAT | O_EXCL, 0600);
        _exit(0);  // not reached
      },
      testing::KilledBySignal(SIGSYS),
      "the block-uring thread made system call openat.*the call at (libc|vmm_[a-z_]*tests)[^ ]*\\+0x[0-9a-f]+.*"
      "path \"/kvmmio-no-such-dir/file\"");
}

TEST(SeccompDeathTest, ArgumentsAreFilteredToo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // No thread maps executable memory after set-up.
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kVcpu);
        ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        _exit(0);
      },
      testing::KilledBySignal(SIGSYS), "the vcpu thread made system call mmap");
  // ioctl only with the requests of the thread's class: the event loop
  // creates no VM.
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kDevice);
        ::ioctl(STDERR_FILENO, KVM_CREATE_VM, 0);
        _exit(0);
      },
      testing::KilledBySignal(SIGSYS), "the device thread made system call ioctl");
  // socket() for the listed domains only, and only where sockets are made.
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kVcpu);
        ::socket(AF_PACKET, SOCK_RAW, 0);
        _exit(0);
      },
      testing::KilledBySignal(SIGSYS), "the vcpu thread made system call socket");
  // Signals to this process's threads only (signal 0: only asked whether
  // it could be sent).
  EXPECT_EXIT(
      {
        const pid_t parent = ::getppid();
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kMain);
        if (::syscall(SYS_tgkill, ::getpid(), ::syscall(SYS_gettid), 0) != 0) _exit(10);
        if (::write(STDERR_FILENO, "own\n", 4) != 4) _exit(11);
        ::syscall(SYS_tgkill, parent, parent, 0);
        _exit(0);
      },
      testing::KilledBySignal(SIGSYS), "own\n(.|\n)*the main thread made system call tgkill");
}

// A reboot in place (--on-reboot restart) runs on the confined main
// thread: the kernel and initrd read into guest RAM again (pread64) and
// the timers the devices' resets cancel (timerfd_settime).
TEST(Seccomp, TheMainThreadMayReloadTheGuestAndCancelTimers) {
  EXPECT_EXIT(
      {
        const int file = ::memfd_create("kernel", MFD_CLOEXEC);
        const int timer = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (file < 0 || timer < 0 || ::write(file, "Image", 5) != 5) _exit(10);
        Seccomp s(SeccompMode::kOn);
        s.confine_this_thread(ThreadClass::kMain);
        char buf[5];
        if (::pread(file, buf, sizeof buf, 0) != 5) _exit(11);
        const itimerspec off{};
        if (::timerfd_settime(timer, 0, &off, nullptr) != 0) _exit(12);
        _exit(0);
      },
      testing::ExitedWithCode(0), "");
}

// openat's flags, per class: vCPU threads open existing files only (no
// O_CREAT, no O_TRUNC); the control and main threads may create a file
// only with O_EXCL and empty none; the other classes open nothing.
// Through libc's openat, which is the openat system call on arm64 and
// x86-64 alike.

// Confined as `c`, opens `path` with `flags`; exits 0 and says "opened"
// when the call is allowed (whatever the kernel then answers).
[[noreturn]] void open_confined(ThreadClass c, const std::string& path, int flags) {
  Seccomp s(SeccompMode::kOn);
  s.confine_this_thread(c);
  const int fd = ::openat(AT_FDCWD, path.c_str(), flags, 0600);
  if (fd >= 0) ::close(fd);
  if (::write(STDERR_FILENO, "opened\n", 7) != 7) _exit(12);
  _exit(0);
}

TEST(SeccompDeathTest, AVcpuThreadOpensExistingFilesOnly) {
  // Forked, not run again: the child's files are in this test's directory.
  GTEST_FLAG_SET(death_test_style, "fast");
  test::TempDir dir;
  const std::string existing = dir.file("existing");
  test::write_file(existing, {1, 2, 3});
  // As vhost-net's /dev/vhost-net, an image reopened for its ring.
  EXPECT_EXIT(open_confined(ThreadClass::kVcpu, existing, O_RDWR | O_CLOEXEC), testing::ExitedWithCode(0),
              "opened");
  EXPECT_EXIT(open_confined(ThreadClass::kVcpu, existing, O_RDONLY | O_CLOEXEC | O_NONBLOCK),
              testing::ExitedWithCode(0), "opened");
  for (int flags : {O_WRONLY | O_CREAT, O_WRONLY | O_CREAT | O_EXCL, O_RDWR | O_TRUNC, O_RDWR | O_TMPFILE}) {
    SCOPED_TRACE(flags);
    EXPECT_EXIT(open_confined(ThreadClass::kVcpu, flags & O_TMPFILE ? dir.file("") : dir.file("new"), flags),
                testing::KilledBySignal(SIGSYS), "the vcpu thread made system call openat");
  }
  EXPECT_EQ(test::read_file(existing).size(), 3u) << "not truncated";
}

TEST(SeccompDeathTest, TheControlAndMainThreadsCreateFilesOnlyWithOExcl) {
  // Forked, not run again: the child's files are in this test's directory.
  GTEST_FLAG_SET(death_test_style, "fast");
  test::TempDir dir;
  const std::string existing = dir.file("existing");
  test::write_file(existing, {1, 2, 3});
  for (ThreadClass c : {ThreadClass::kControl, ThreadClass::kMain}) {
    SCOPED_TRACE(to_string(c));
    const std::string refused = std::string("the ") + to_string(c) + " thread made system call openat";
    // The --stats temporary, as the stats file's writer creates it.
    const std::string tmp = dir.file(std::string("stats.") + to_string(c));
    EXPECT_EXIT(open_confined(c, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC),
                testing::ExitedWithCode(0), "opened");
    EXPECT_EQ(::access(tmp.c_str(), F_OK), 0) << "created";
    // /proc/self/status for the footprint; the stats file opened in place.
    EXPECT_EXIT(open_confined(c, "/proc/self/status", O_RDONLY | O_CLOEXEC), testing::ExitedWithCode(0), "opened");
    EXPECT_EXIT(open_confined(c, existing, O_WRONLY | O_CLOEXEC), testing::ExitedWithCode(0), "opened");
    // Taken over or emptied: an existing file, or a link planted at the name.
    for (int flags : {O_WRONLY | O_CREAT, O_WRONLY | O_CREAT | O_TRUNC, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC,
                      O_WRONLY | O_TRUNC, O_RDWR | O_TMPFILE}) {
      SCOPED_TRACE(flags);
      EXPECT_EXIT(open_confined(c, flags & O_TMPFILE ? dir.file("") : existing, flags),
                  testing::KilledBySignal(SIGSYS), refused);
    }
  }
  EXPECT_EQ(test::read_file(existing).size(), 3u) << "not truncated";
}

// The --stats file is written after confinement: a snapshot on the
// control thread (SIGUSR1), the last document on the main thread, each a
// temporary made with O_EXCL and renamed over the file; an existing file
// (opened before) the same way.
[[noreturn]] void write_stats_confined(ThreadClass c, const std::string& path) {
  Seccomp s(SeccompMode::kOn);
  OutputFile out(path, "--stats");
  s.confine_this_thread(c);
  try {
    out.write(std::string("{\"first\":1}\n"));
    out.write(std::string("{\"second\":2}\n"));
  } catch (const std::exception&) {
    _exit(20);
  }
  if (::write(STDERR_FILENO, "written\n", 8) != 8) _exit(12);
  _exit(0);
}

TEST(SeccompDeathTest, TheStatsFileIsWrittenUnderTheControlAndMainFilters) {
  // Forked, not run again: the child's files are in this test's directory.
  GTEST_FLAG_SET(death_test_style, "fast");
  test::TempDir dir;
  const std::string expected = "{\"second\":2}\n";
  for (ThreadClass c : {ThreadClass::kControl, ThreadClass::kMain}) {
    for (bool existing : {false, true}) {
      SCOPED_TRACE(testing::Message() << to_string(c) << (existing ? ", existing file" : ", new file"));
      const std::string path = dir.file(std::string("stats-") + to_string(c) + (existing ? "-old" : "-new"));
      if (existing) test::write_file(path, {'o', 'l', 'd'});
      EXPECT_EXIT(write_stats_confined(c, path), testing::ExitedWithCode(0), "written");
      const std::vector<uint8_t> got = test::read_file(path);
      EXPECT_EQ(std::string(got.begin(), got.end()), expected);
    }
  }
}

// Confined as `c`, opens `path` read-only; exits 0 saying how it went.
[[noreturn]] void open_read_only_confined(ThreadClass c, const char* path) {
  Seccomp s(SeccompMode::kOn);
  s.confine_this_thread(c);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  const int error = errno;
  if (fd >= 0) {
    ::close(fd);
    if (::write(STDERR_FILENO, "opened\n", 7) != 7) _exit(12);
  } else if (error == EACCES) {
    if (::write(STDERR_FILENO, "refused: EACCES\n", 16) != 16) _exit(12);
  }
  _exit(0);
}

// The other classes open nothing. A read-only open fails with EACCES and
// the thread goes on, as glibc's own opens must (its malloc reads
// /proc/sys/vm/overcommit_memory the first time a thread's heap shrinks);
// an open that could write or make a file stops kvmmio.
TEST(SeccompDeathTest, TheOtherClassesOpenNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (ThreadClass c : {ThreadClass::kDevice, ThreadClass::kBlockIo, ThreadClass::kBlockUring}) {
    SCOPED_TRACE(to_string(c));
    EXPECT_EXIT(open_read_only_confined(c, "/proc/sys/vm/overcommit_memory"), testing::ExitedWithCode(0),
                "refused: EACCES");
    EXPECT_EXIT(open_confined(c, "/proc/self/status", O_RDWR | O_CLOEXEC), testing::KilledBySignal(SIGSYS),
                std::string("the ") + to_string(c) + " thread made system call openat");
    EXPECT_EXIT(open_confined(c, "/tmp", O_RDONLY | O_TMPFILE), testing::KilledBySignal(SIGSYS),
                std::string("the ") + to_string(c) + " thread made system call openat");
  }
}

// What killed a disk's io_uring thread after a reboot in place: the first
// time a thread's own malloc heap shrinks, glibc opens
// /proc/sys/vm/overcommit_memory, there. A confined thread frees enough
// at its heap's top to make it shrink, and goes on.
TEST(SeccompDeathTest, GlibcsOwnOpenWhenAHeapShrinksIsSurvived) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOn);
        std::thread t([&] {
          s.confine_this_thread(ThreadClass::kBlockUring);
          // Below the mmap threshold (128 KiB): from this thread's arena,
          // whose top then passes the trim threshold (128 KiB) when freed.
          std::vector<void*> blocks;
          for (int i = 0; i < 8; ++i) blocks.push_back(std::malloc(100 << 10));
          for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) std::free(*it);
        });
        t.join();
        if (::write(STDERR_FILENO, "survived\n", 9) != 9) _exit(12);
        _exit(0);
      },
      testing::ExitedWithCode(0), "survived");
}

// socket(): each class makes exactly the kinds it needs, with
// SOCK_CLOEXEC and SOCK_NONBLOCK as it likes; any other is refused.

// Confined as `c`, makes the socket; exits 0 and says "made" when the
// call is allowed.
[[noreturn]] void socket_confined(ThreadClass c, int domain, int type, int protocol) {
  Seccomp s(SeccompMode::kOn);
  s.confine_this_thread(c);
  const int fd = ::socket(domain, type, protocol);
  if (fd >= 0) ::close(fd);
  if (::write(STDERR_FILENO, "made\n", 5) != 5) _exit(12);
  _exit(0);
}

struct SocketCall {
  int domain, type, protocol;
};

TEST(SeccompDeathTest, SocketsArePinnedToTheKindsEachClassMakes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Interface ioctls (hw/net/tap.cc); the tap monitor (hw/net/tap_monitor.cc).
  constexpr SocketCall kIoctlSocket{AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0};
  constexpr SocketCall kMonitorSocket{AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE};
  const struct {
    ThreadClass c;
    std::vector<SocketCall> allowed;
  } classes[] = {{ThreadClass::kVcpu, {kIoctlSocket, kMonitorSocket, {AF_INET, SOCK_DGRAM, 0}}},
                 {ThreadClass::kDevice, {kIoctlSocket}},
                 {ThreadClass::kControl, {}},
                 {ThreadClass::kMain, {}}};
  const std::vector<SocketCall> refused = {
      {AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0},  // a connection out
      {AF_INET, SOCK_STREAM, 0},
      {AF_INET6, SOCK_DGRAM, 0},
      {AF_INET, SOCK_RAW, IPPROTO_ICMP},
      {AF_INET, SOCK_DGRAM, IPPROTO_UDP},  // the same socket, named otherwise: pinned all the same
      {AF_UNIX, SOCK_STREAM, 0},
      {AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT},
      {AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE},
      {AF_INET, SOCK_DGRAM | 0x1000, 0},  // a flag beside SOCK_CLOEXEC and SOCK_NONBLOCK
      {AF_PACKET, SOCK_RAW, 0},
  };
  for (const auto& [c, allowed] : classes) {
    SCOPED_TRACE(to_string(c));
    for (const SocketCall& k : allowed) {
      SCOPED_TRACE(testing::Message() << k.domain << " " << k.type << " " << k.protocol);
      EXPECT_EXIT(socket_confined(c, k.domain, k.type, k.protocol), testing::ExitedWithCode(0), "made");
    }
    std::vector<SocketCall> not_allowed = refused;
    if (c != ThreadClass::kVcpu) not_allowed.push_back(kMonitorSocket);
    if (c != ThreadClass::kVcpu && c != ThreadClass::kDevice) not_allowed.push_back(kIoctlSocket);
    for (const SocketCall& k : not_allowed) {
      SCOPED_TRACE(testing::Message() << k.domain << " " << k.type << " " << k.protocol);
      EXPECT_EXIT(socket_confined(c, k.domain, k.type, k.protocol), testing::KilledBySignal(SIGSYS),
                  std::string("the ") + to_string(c) + " thread made system call socket");
    }
  }
}

// The control thread asks who a client of the control socket or the
// console relay is (SO_PEERCRED), and no other socket option.
[[noreturn]] void getsockopt_confined(int option) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) _exit(10);
  Seccomp s(SeccompMode::kOn);
  s.confine_this_thread(ThreadClass::kControl);
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(pair[0], SOL_SOCKET, option, &cred, &len) != 0) _exit(11);
  if (option == SO_PEERCRED && cred.pid != ::getpid()) _exit(12);
  if (::write(STDERR_FILENO, "asked\n", 6) != 6) _exit(13);
  _exit(0);
}

TEST(SeccompDeathTest, TheControlThreadReadsPeerCredentialsOnly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(getsockopt_confined(SO_PEERCRED), testing::ExitedWithCode(0), "asked");
  EXPECT_EXIT(getsockopt_confined(SO_TYPE), testing::KilledBySignal(SIGSYS),
              "the control thread made system call getsockopt");
}

// Log mode: the call is made (with its real result) and named, once.
TEST(SeccompDeathTest, LogModeMakesTheCallAndNamesIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const pid_t parent = ::getppid();
        Seccomp s(SeccompMode::kLog);
        s.confine_this_thread(ThreadClass::kControl);
        const pid_t seen = static_cast<pid_t>(::syscall(SYS_getppid));
        ::syscall(SYS_getppid);  // a second time: counted, not printed again
        if (seen != parent) _exit(20);
        if (s.logged_calls() != 2) _exit(21);
        _exit(0);
      },
      testing::ExitedWithCode(0),
      "seccomp \\(log mode\\): the control thread made system call getppid \\([0-9]+\\), which its "
      "allow-list does not have; allowed");
}

TEST(SeccompDeathTest, OffInstallsNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Seccomp s(SeccompMode::kOff);
        s.confine_this_thread(ThreadClass::kDevice);
        if (::syscall(SYS_getppid) <= 0) _exit(30);
        _exit(0);
      },
      testing::ExitedWithCode(0), "");
}

[[noreturn]] void drop_to_nobody_and_check() {
  drop_privileges(65534, 65534);
  uid_t r = 0, e = 0, saved = 0;
  ::getresuid(&r, &e, &saved);
  if (r != 65534 || e != 65534 || saved != 65534) _exit(40);
  if (::getegid() != 65534) _exit(41);
  if (::getgroups(0, nullptr) != 0) _exit(42);
  if (effective_capabilities() != 0) _exit(43);
  if (::setuid(0) == 0) _exit(44);
  if (::prctl(PR_GET_DUMPABLE) != 0) _exit(45);
  _exit(0);
}

TEST(PrivilegesDeathTest, DroppingToAUserLeavesNoCapabilityAndNoWayBack) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop from";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      drop_to_nobody_and_check(),
      testing::ExitedWithCode(0), "");
}

TEST(PrivilegesDeathTest, TheProcessIsNotDumpable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        harden_process();
        _exit(::prctl(PR_GET_DUMPABLE) == 0 ? 0 : 50);
      },
      testing::ExitedWithCode(0), "");
}

// From passwd and group files as the system has them (the arm64
// platform's L1 has none: its own files here).
TEST(Privileges, UsersAndGroupsResolveByNameOrNumber) {
  test::TempDir dir;
  const std::string passwd = dir.file("passwd"), group = dir.file("group");
  const std::string p = "root:x:0:0:root:/root:/bin/sh\nkvmmio:x:990:991::/nonexistent:/usr/sbin/nologin\n";
  const std::string g = "root:x:0:\nkvm:x:992:kvmmio\n";
  test::write_file(passwd, std::vector<uint8_t>(p.begin(), p.end()));
  test::write_file(group, std::vector<uint8_t>(g.begin(), g.end()));
  EXPECT_EQ(resolve_user("root", passwd.c_str()).uid, 0u);
  const Identity k = resolve_user("kvmmio", passwd.c_str());
  EXPECT_EQ(k.uid, 990u);
  EXPECT_EQ(k.gid, 991u) << "the primary group from the passwd entry";
  EXPECT_EQ(resolve_user("990", passwd.c_str()).gid, 991u);
  EXPECT_EQ(resolve_user("4242", passwd.c_str()).uid, 4242u);
  EXPECT_EQ(resolve_user("4242", passwd.c_str()).gid, 4242u) << "no entry: the group is the number";
  EXPECT_EQ(resolve_group("kvm", group.c_str()), 992u);
  EXPECT_EQ(resolve_group("4243", group.c_str()), 4243u);
  EXPECT_THROW(resolve_user("no-such-user-kvmmio", passwd.c_str()), UsageError);
  EXPECT_THROW(resolve_group("no-such-group-kvmmio", group.c_str()), UsageError);
}

}  // namespace
}  // namespace kvmmio::vmm
