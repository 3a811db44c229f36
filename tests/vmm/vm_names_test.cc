// SPDX-License-Identifier: BSD-2-Clause
// Named VMs without KVM: the runtime directory and its pidfile lock
// (vm_directory.h), the control socket's `info`, and `kvmmio list`, `stop`
// and `ctl NAME` against a control server in a named directory, with a
// fake machine behind it whose power key and quit end the "VM" the way a
// kvmmio's exit does (its directory and lock go).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "fake_vm_control.h"
#include "kvmmio/base/event_loop.h"
#include "test_files.h"
#include "vmm/control/control_client.h"
#include "vmm/control/control_server.h"
#include "vmm/cli/options.h"
#include "vmm/cli/vm_commands.h"
#include "vmm/control/vm_directory.h"

namespace kvmmio::vmm {
namespace {

using Json = nlohmann::json;

// KVMMIO_RUNTIME_DIR pointed at a scratch BASE for the test's life.
class RuntimeDir {
 public:
  RuntimeDir() : base_(dir_.file("run")) { ::setenv("KVMMIO_RUNTIME_DIR", base_.c_str(), 1); }
  ~RuntimeDir() { ::unsetenv("KVMMIO_RUNTIME_DIR"); }
  const std::string& base() const { return base_; }
  std::string parent() const { return dir_.path(); }

 private:
  test::TempDir dir_;
  std::string base_;
};

std::string capture(const std::function<void(std::FILE*)>& f) {
  std::FILE* out = std::tmpfile();
  f(out);
  std::rewind(out);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, out)) > 0) text.append(buf, n);
  std::fclose(out);
  return text;
}

TEST(VmNames, NamesAreShortAndPlain) {
  for (const char* ok : {"vm0", "a", "web-1", "db_2.test", "0abc", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"})
    EXPECT_NO_THROW(check_vm_name(ok, "--name")) << ok;
  for (const char* bad : {"", ".", "..", "-vm", "_vm", ".vm", "a/b", "a b", "vm\n", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
                          "vm:0", "\xc3\xa9t\xc3\xa9"}) {
    SCOPED_TRACE(bad);
    try {
      check_vm_name(bad, "--name x");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("letters, digits"), std::string::npos) << e.what();
    }
  }
}

TEST(VmNames, TheDirectoryIsPrivateHoldsThePidAndGoesAway) {
  RuntimeDir run;
  {
    VmDirectory d("vm0");
    EXPECT_EQ(d.path(), run.base() + "/vm0");
    struct stat st {};
    ASSERT_EQ(::stat(run.base().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u) << "BASE made 0700";
    ASSERT_EQ(::stat(d.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    const auto pid = test::read_file(d.file(kPidFile));
    EXPECT_EQ(std::string(pid.begin(), pid.end()), std::to_string(::getpid()) + "\n");
    EXPECT_EQ(running_vm_pid("vm0"), ::getpid());
    EXPECT_EQ(vm_names(), std::vector<std::string>{"vm0"});
  }
  EXPECT_FALSE(running_vm_pid("vm0"));
  EXPECT_TRUE(vm_names().empty()) << "the directory is removed";
}

TEST(VmNames, ANameInUseIsRefusedWithItsPidAndTheFix) {
  RuntimeDir run;
  VmDirectory first("web");
  try {
    VmDirectory second("web");
    FAIL() << "a second VM of one name";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("a VM of that name runs"), std::string::npos) << m;
    EXPECT_NE(m.find("PID " + std::to_string(::getpid())), std::string::npos) << m;
    EXPECT_NE(m.find("kvmmio stop web"), std::string::npos) << m;
  }
  EXPECT_EQ(running_vm_pid("web"), ::getpid()) << "the refused one took nothing from the first";
  VmDirectory other("db");  // another name is free
  EXPECT_EQ(vm_names(), (std::vector<std::string>{"db", "web"}));
}

TEST(VmNames, ADeadVmsDirectoryIsTakenOver) {
  RuntimeDir run;
  ASSERT_EQ(::mkdir(run.base().c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((run.base() + "/old").c_str(), 0700), 0);
  test::write_file(run.base() + "/old/pid", {'9', '9', '9', '\n'});  // unlocked: its kvmmio is gone
  EXPECT_FALSE(running_vm_pid("old"));
  VmDirectory d("old");
  EXPECT_EQ(running_vm_pid("old"), ::getpid());
}

TEST(VmNames, ABaseOthersCouldWriteIsRefused) {
  RuntimeDir run;
  ASSERT_EQ(::mkdir(run.base().c_str(), 0777), 0);
  ASSERT_EQ(::chmod(run.base().c_str(), 0777), 0);
  try {
    VmDirectory d("vm0");
    FAIL() << "a world-writable BASE";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("writable by other users"), std::string::npos) << e.what();
  }
  ASSERT_EQ(::rmdir(run.base().c_str()), 0);
  ASSERT_EQ(::symlink(run.parent().c_str(), run.base().c_str()), 0);
  EXPECT_THROW(VmDirectory("vm0"), UsageError) << "BASE a symlink";
}

TEST(VmNames, TheBaseIsRootsRunOrTheUsersRuntimeDirectory) {
  ::unsetenv("KVMMIO_RUNTIME_DIR");
  if (::geteuid() == 0) {
    EXPECT_EQ(runtime_base(), "/run/kvmmio");
  } else {
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    if (xdg && *xdg) {
      EXPECT_EQ(runtime_base(), std::string(xdg) + "/kvmmio");
    }
  }
  ::setenv("KVMMIO_RUNTIME_DIR", "/somewhere", 1);
  EXPECT_EQ(runtime_base(), "/somewhere");
  EXPECT_EQ(vm_file("vm0", kApiSocketFile), "/somewhere/vm0/api.sock");
  ::unsetenv("KVMMIO_RUNTIME_DIR");
}

// --- The commands, against a served "VM" --------------------------------------

// A named VM without KVM: its directory, its control socket served on a
// loop, and a machine whose power key (when it obeys) and quit end it as
// kvmmio's exit would: the server stops and the directory goes.
class ServedVm final : public VmControl {
 public:
  ServedVm(const std::string& name, bool obeys_power_key, std::optional<uint32_t> cid = {})
      : obeys_(obeys_power_key) {
    dir_.emplace(name);
    server_ = std::make_unique<ControlServer>(dir_->file(kApiSocketFile));
    VmIdentity id;
    id.name = name;
    id.pid = ::getpid();
    id.mem_bytes = 256ull << 20;
    id.macs = {"52:54:00:12:34:56", "52:54:00:ab:cd:ef"};
    id.cid = cid;
    server_->set_identity(id);
    server_->start(loop_, *this);
  }
  ~ServedVm() override { end(); }

  MachineStats stats() override { return {}; }
  int pause() override { return 2; }
  void resume() override {}
  bool paused() const override { return false; }
  int vcpu_count() const override { return 2; }
  void press_power_key() override {
    ++presses;
    if (obeys_) exit_soon();
  }
  void quit() override {
    ++quits;
    exit_soon();
  }

  std::atomic<int> presses{0}, quits{0};

 private:
  // From the loop's callback: the lock goes now (what stop watches), the
  // server after its answer.
  void exit_soon() {
    std::lock_guard<std::mutex> g(m_);
    dir_.reset();
  }
  void end() {
    if (server_) server_->stop();
    std::lock_guard<std::mutex> g(m_);
    dir_.reset();
  }

  bool obeys_;
  std::mutex m_;
  std::optional<VmDirectory> dir_;
  EventLoop loop_{"control"};
  std::unique_ptr<ControlServer> server_;
};

TEST(VmCommands, ListShowsEachRunningNamedVm) {
  RuntimeDir run;
  EXPECT_EQ(capture([](std::FILE* f) { run_list(f); }), "NAME  PID  STATE  UPTIME  CPUS  MEM  CID  MACS\n")
      << "no VM: the header alone";
  ServedVm a("alpha", true, 7), b("beta", true);
  // A directory a killed kvmmio left: not listed.
  ASSERT_EQ(::mkdir((run.base() + "/gone").c_str(), 0700), 0);
  const std::string text = capture([](std::FILE* f) { EXPECT_EQ(run_list(f), 0); });
  SCOPED_TRACE(text);
  const std::string pid = std::to_string(::getpid());
  EXPECT_NE(text.find("alpha  " + pid + "  running"), std::string::npos);
  EXPECT_NE(text.find("beta   " + pid + "  running"), std::string::npos);
  EXPECT_NE(text.find("  2  256M    7  52:54:00:12:34:56,52:54:00:ab:cd:ef"), std::string::npos) << "alpha's CID";
  EXPECT_NE(text.find("  2  256M    -  52:54:00:12:34:56,52:54:00:ab:cd:ef"), std::string::npos) << "beta has none";
  EXPECT_EQ(text.find("gone"), std::string::npos);
}

// What --vsock says when the kernel answers EADDRINUSE: which VM holds it.
TEST(VmCommands, TheVmHoldingACidIsFoundByItsInfo) {
  RuntimeDir run;
  ServedVm a("alpha", true, 7), b("beta", true);
  EXPECT_EQ(vm_holding_cid(7, "vm-new"), std::optional<std::string>("alpha"));
  EXPECT_EQ(vm_holding_cid(7, "alpha"), std::nullopt) << "a VM is not its own rival";
  EXPECT_EQ(vm_holding_cid(8, "vm-new"), std::nullopt);
}

TEST(VmCommands, InfoAndCtlByName) {
  RuntimeDir run;
  ServedVm vm("vm0", true);
  const Json info = Json::parse(control_request(vm_file("vm0", kApiSocketFile), "info", "test", "vm0"));
  EXPECT_EQ(info["name"], "vm0");
  EXPECT_EQ(info["pid"], ::getpid());
  EXPECT_EQ(info["state"], "running");
  EXPECT_EQ(info["vcpus"], 2);
  EXPECT_EQ(info["mem_mib"], 256);
  EXPECT_EQ(info["macs"].size(), 2u);
  EXPECT_GE(info["uptime_s"].get<int>(), 0);
  const Command cmd = parse_command_line({"ctl", "vm0", "info"});
  EXPECT_EQ(cmd.ctl.socket, run.base() + "/vm0/api.sock");
  EXPECT_EQ(capture([&](std::FILE* f) { EXPECT_EQ(run_ctl(cmd.ctl, f), 0); }).rfind("{\"name\":\"vm0\"", 0), 0u);
  EXPECT_EQ(parse_command_line({"ctl", "./vm0.sock", "stats"}).ctl.socket, "./vm0.sock") << "a path has a slash";
  try {
    run_ctl(parse_command_line({"ctl", "nosuch", "stats"}).ctl);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no VM named nosuch runs"), std::string::npos) << e.what();
  }
}

TEST(VmCommands, StopPressesThePowerKeyAndWaitsForTheExit) {
  RuntimeDir run;
  ServedVm vm("vm0", /*obeys_power_key=*/true);
  const std::string out = capture([](std::FILE* f) { EXPECT_EQ(run_stop(StopOptions{"vm0", 5}, f), 0); });
  EXPECT_EQ(out, "vm0: powered off\n");
  EXPECT_EQ(vm.presses, 1);
  EXPECT_EQ(vm.quits, 0);
  EXPECT_FALSE(running_vm_pid("vm0"));
}

TEST(VmCommands, StopQuitsAGuestThatIgnoresThePowerKey) {
  RuntimeDir run;
  ServedVm vm("vm0", /*obeys_power_key=*/false);
  const std::string out = capture([](std::FILE* f) { EXPECT_EQ(run_stop(StopOptions{"vm0", 1}, f), 0); });
  EXPECT_EQ(out, "vm0: the guest did not power off within 1 s: quitting it\nvm0: stopped\n");
  EXPECT_EQ(vm.presses, 1);
  EXPECT_EQ(vm.quits, 1);
}

TEST(VmCommands, NoSuchVmIsAUsageErrorNamingList) {
  RuntimeDir run;
  for (const auto& f : std::vector<std::function<void()>>{[] { run_stop(StopOptions{"nosuch", 1}); },
                                                          [] { run_console_attach("nosuch"); }}) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("no VM named nosuch runs (kvmmio list"), std::string::npos) << e.what();
    }
  }
}

TEST(VmCommands, ConsoleNeedsTheConsoleSocket) {
  RuntimeDir run;
  ServedVm vm("vm0", true);  // a control socket, no console socket
  try {
    run_console_attach("vm0");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--console serial,socket"), std::string::npos) << e.what();
  }
}

TEST(VmCommands, RunOptionsOfANamedVm) {
  RuntimeDir run;
  Command c = parse_command_line({"run", "--kernel", "/k", "--name", "vm0", "--console", "serial,socket"});
  EXPECT_EQ(c.run.name, "vm0");
  EXPECT_EQ(c.run.console_to.path, run.base() + "/vm0/console.sock");
  EXPECT_THROW(parse_command_line({"run", "--kernel", "/k", "--console", "serial,socket"}), UsageError);
  EXPECT_THROW(parse_command_line({"run", "--kernel", "/k", "--name", "vm0", "--api-socket", "/tmp/x.sock"}),
               UsageError);
  EXPECT_THROW(parse_command_line({"run", "--kernel", "/k", "--name", "a/b"}), UsageError);
  EXPECT_EQ(parse_command_line({"stop", "vm0", "--timeout", "7"}).stop.timeout_s, 7);
  EXPECT_EQ(parse_command_line({"stop", "--timeout=7", "vm0"}).stop.name, "vm0");
  EXPECT_THROW(parse_command_line({"stop"}), UsageError);
  EXPECT_THROW(parse_command_line({"stop", "vm0", "--timeout", "0"}), UsageError);
  EXPECT_THROW(parse_command_line({"list", "x"}), UsageError);
  EXPECT_EQ(parse_command_line({"list"}).kind, Command::Kind::kList);
  EXPECT_EQ(parse_command_line({"console", "vm0"}).console_name, "vm0");
  EXPECT_THROW(parse_command_line({"console"}), UsageError);
}

// kvmmio network is root's: another user is told so before anything is
// touched (forked: the test may run as root, and drops to nobody there).
TEST(VmCommandsDeathTest, NetworkNeedsRoot) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (::geteuid() == 0 && ::setresuid(65534, 65534, 65534) != 0) _exit(3);
        try {
          run_network(NetworkCommand{});
        } catch (const UsageError& e) {
          if (::write(STDERR_FILENO, e.what(), std::strlen(e.what())) < 0) _exit(4);
          _exit(0);
        }
        _exit(5);
      },
      testing::ExitedWithCode(0), "kvmmio network needs root");
}

// kvmmio network's command line (what it does to the host:
// tests/vmm/nat-network.test).
TEST(VmCommands, NetworkCommands) {
  const Command c = parse_command_line({"network", "create"});
  EXPECT_EQ(c.kind, Command::Kind::kNetwork);
  EXPECT_EQ(c.network.action, NetworkCommand::Action::kCreate);
  EXPECT_EQ(c.network.name, "kvmnat0");
  EXPECT_EQ(c.network.subnet.text(), "192.168.123.0/24");
  const Command d = parse_command_line({"network", "create", "lab", "--subnet", "10.77.0.0/16"});
  EXPECT_EQ(d.network.name, "lab");
  EXPECT_EQ(ipv4_text(d.network.subnet.gateway()), "10.77.0.1");
  EXPECT_EQ(ipv4_text(d.network.subnet.first_lease()), "10.77.0.2");
  EXPECT_EQ(ipv4_text(d.network.subnet.last_lease()), "10.77.255.254");
  EXPECT_EQ(parse_command_line({"network", "delete", "lab"}).network.action, NetworkCommand::Action::kDelete);
  EXPECT_EQ(parse_command_line({"network", "list"}).network.action, NetworkCommand::Action::kList);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"network"},
           {"network", "make"},
           {"network", "list", "x"},
           {"network", "create", "a", "b"},
           {"network", "create", "a/b"},
           {"network", "create", "-x"},
           {"network", "create", ".x"},
           {"network", "create", "a-name-longer-than-15"},
           {"network", "delete", "--subnet", "10.0.0.0/24"},
           {"network", "create", "--subnet", "10.0.0.1/24"},
           {"network", "create", "--subnet", "10.0.0.0/8"},
           {"network", "create", "--subnet", "10.0.0.0/30"},
           {"network", "create", "--subnet", "10.0.0/24"},
           {"network", "create", "--subnet", "10.0.0.0"}}) {
    SCOPED_TRACE(bad.back());
    EXPECT_THROW(parse_command_line(bad), UsageError);
  }
  try {
    parse_command_line({"network", "create", "--subnet", "10.0.0.1/24"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("host bits set: the subnet is 10.0.0.0/24"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvmmio::vmm
