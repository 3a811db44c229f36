// SPDX-License-Identifier: BSD-2-Clause
// Confinement, proved in child processes (a filter cannot be taken back):
// each thread class's filter loads; a call outside it stops the process as
// killed by SIGSYS with a message naming the thread class and the call;
// in log mode the call is made and named; the privilege drop leaves no
// capability and no way back; the process is not dumpable.
#include "vmm/seccomp.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <linux/kvm.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "../block/block_machine.h"
#include "../net/link_control.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_fd.h"
#include "fake_vm_control.h"
#include "kvmmio/gpio/pl061.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/tap_monitor.h"
#include "vmm/console_relay.h"
#include "vmm/control_server.h"
#include "vmm/unix_socket.h"
#include "vmm/options.h"
#include "vmm/privileges.h"
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
