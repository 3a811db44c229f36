// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's command line: every option in both forms, defaults, and one
// clear UsageError (exit status 2) per kind of mistake, naming the fix.
#include "vmm/cli/devices.h"
#include "vmm/cli/options.h"

#include <gtest/gtest.h>

#include "vmm/boot/memory_map_arm64.h"

namespace kvmmio::vmm {
namespace {

Command parse(std::vector<std::string> args) { return parse_command_line(args); }

TEST(Options, ParsesEveryRunOptionInBothForms) {
  Command c = parse({"run", "--kernel", "/k/Image", "--initrd=/i.cpio", "--cmdline",
                     "quiet root=/dev/vda", "--mem=1G", "--cpus", "4", "--gic=v2", "--console",
                     "serial", "--dump-dtb", "out.dtb", "--stats=s.json"});
  ASSERT_EQ(c.kind, Command::Kind::kRun);
  const RunOptions& o = c.run;
  EXPECT_EQ(o.kernel, "/k/Image");
  EXPECT_EQ(o.initrd, "/i.cpio");
  EXPECT_EQ(o.cmdline_extra, "quiet root=/dev/vda");
  EXPECT_EQ(o.kernel_cmdline(), "console=ttyAMA0 quiet root=/dev/vda");
  EXPECT_EQ(o.mem, uint64_t{1} << 30);
  EXPECT_EQ(o.cpus, 4);
  EXPECT_EQ(o.gic, GicChoice::kV2);
  EXPECT_EQ(o.console, ConsoleKind::kSerial);
  EXPECT_EQ(o.dump_dtb, "out.dtb");
  EXPECT_EQ(o.stats, "s.json");
}

TEST(Options, DefaultsAreTheDocumentedOnes) {
  const RunOptions o = parse({"run", "--kernel", "Image"}).run;
  EXPECT_EQ(o.mem, uint64_t{512} << 20);
  EXPECT_EQ(o.cpus, 1);
  EXPECT_EQ(o.gic, GicChoice::kAuto);
  EXPECT_EQ(o.console, ConsoleKind::kSerial);
  EXPECT_FALSE(o.initrd || o.dump_dtb || o.stats || o.cmdline_extra || o.cmdline_replace);
  EXPECT_EQ(o.kernel_cmdline(), "console=ttyAMA0");
  RunOptions v = parse({"run", "--kernel", "Image", "--console", "virtio"}).run;
  EXPECT_EQ(v.kernel_cmdline(), "console=hvc0");
  // --cmdline adds to the default, after it; an empty one adds nothing.
  EXPECT_EQ(parse({"run", "--kernel", "Image", "--console", "virtio", "--cmdline", "quiet"}).run.kernel_cmdline(),
            "console=hvc0 quiet");
  EXPECT_EQ(parse({"run", "--kernel", "Image", "--cmdline="}).run.kernel_cmdline(), "console=ttyAMA0");
  // --cmdline-replace is the whole line, the default left out; an
  // explicitly empty one stays empty.
  EXPECT_EQ(parse({"run", "--kernel", "Image", "--cmdline-replace", "console=hvc0 rdinit=/x"}).run.kernel_cmdline(),
            "console=hvc0 rdinit=/x");
  EXPECT_EQ(parse({"run", "--kernel", "Image", "--cmdline-replace="}).run.kernel_cmdline(), "");
}

TEST(Options, HelpAndVersion) {
  EXPECT_EQ(parse({"--help"}).kind, Command::Kind::kHelp);
  EXPECT_EQ(parse({"-h"}).kind, Command::Kind::kHelp);
  EXPECT_EQ(parse({"run", "--kernel", "x", "--help"}).kind, Command::Kind::kHelp);
  EXPECT_EQ(parse({"--version"}).kind, Command::Kind::kVersion);
  // After run too, whatever else is on the line.
  EXPECT_EQ(parse({"run", "--version"}).kind, Command::Kind::kVersion);
  EXPECT_EQ(parse({"run", "--kernel", "x", "--mem", "junk", "--version"}).kind, Command::Kind::kVersion);
  EXPECT_EQ(version_text().rfind("kvmmio ", 0), 0u);
}

TEST(Options, HelpDocumentsEveryOptionAndExitStatus) {
  const std::string help = help_text();
  for (const char* opt : {"--kernel", "--initrd", "--cmdline", "--cmdline-replace", "--mem", "--cpus", "--gic",
                          "--console", "--net", "--disk", "--vsock", "--fs", "--dump-dtb", "--stats", "--seccomp", "--user",
                          "--group", "--log-level", "--on-reboot", "--help", "--version"})
    EXPECT_TRUE(help.find(std::string("\n  ") + opt + " ") != std::string::npos ||
                help.find(std::string(", ") + opt + " ") != std::string::npos)
        << opt << " is not in the option list";
  for (const char* status : {"\n  0 ", "\n  1 ", "\n  2 ", "\n  3 ", "128+N"})
    EXPECT_NE(help.find(status), std::string::npos) << status;
  EXPECT_NE(help.find(default_cmdline(ConsoleKind::kVirtio)), std::string::npos);
  for (const char* key : {"tap=NAME", "vhost=on|off|auto", "irq=irqfd|relay", "notify=ioeventfd|trap",
                          "regs=mirror|trap", "version=2|1", "event_idx=on|off"})
    EXPECT_NE(help.find(key), std::string::npos) << key;
  // The transport's keys are in a section of their own, after the options.
  const size_t expert = help.find("\nExpert keys");
  ASSERT_NE(expert, std::string::npos);
  EXPECT_GT(help.find("irq=irqfd|relay"), expert);
  // An installed kvmmio names its installed manual, not the source tree's docs.
  EXPECT_NE(help.find("man kvmmio"), std::string::npos);
  EXPECT_EQ(help.find("docs/usage.md"), std::string::npos);
}

TEST(Options, DisksAreRepeatableAndTakeTheSlotsAfterNetsAndTheConsole) {
  const RunOptions o = parse({"run", "--kernel", "k", "--disk", "vda.img,serial=root", "--net", "tap=a",
                              "--disk=/dev/sdb,ro=on,cache=none,regs=trap", "--console", "virtio"})
                           .run;
  ASSERT_EQ(o.disks.size(), 2u);
  EXPECT_EQ(o.disks[0].path, "vda.img");
  EXPECT_EQ(o.disks[0].serial, "root");
  EXPECT_FALSE(o.disks[0].read_only);
  EXPECT_EQ(o.disks[1].path, "/dev/sdb");
  EXPECT_TRUE(o.disks[1].read_only);
  EXPECT_EQ(o.disks[1].cache, block::CacheMode::kNone);
  EXPECT_EQ(o.disks[1].transport.regs, virtio::RegsMode::kTrap);
  // Adding a disk moves neither the network device nor the console; the
  // entropy device (on by default) comes after them all.
  std::vector<std::string> slots;
  for (const VirtioDevicePlan& p : plan_virtio_devices(o, 1)) slots.push_back(p.name + " " + p.type);
  EXPECT_EQ(slots, (std::vector<std::string>{"net0 virtio-net", "console0 virtio-console", "disk0 virtio-blk",
                                             "disk1 virtio-blk", "rng0 virtio-rng"}));
}

// --vsock: one device, its CID checked at parse time; its slot after the
// disks and before the entropy device, so adding it moves none of the
// user's other devices.
TEST(Options, VsockTakesOneCidAndTheSlotAfterTheDisks) {
  EXPECT_FALSE(parse({"run", "--kernel", "k"}).run.vsock) << "no vsock device unless asked";
  const RunOptions o = parse({"run", "--kernel", "k", "--disk", "a.img", "--vsock", "cid=3", "--net", "tap=t"}).run;
  ASSERT_TRUE(o.vsock);
  EXPECT_EQ(o.vsock->cid, 3u);
  EXPECT_EQ(parse({"run", "--kernel", "k", "--vsock=cid=4294967294"}).run.vsock->cid, 4294967294u);
  std::vector<std::string> slots;
  for (const VirtioDevicePlan& p : plan_virtio_devices(o, 1)) slots.push_back(p.name + " " + p.type);
  EXPECT_EQ(slots, (std::vector<std::string>{"net0 virtio-net", "disk0 virtio-blk", "vsock0 virtio-vsock",
                                             "rng0 virtio-rng"}));
  try {
    parse({"run", "--kernel", "k", "--vsock", "cid=3", "--vsock", "cid=4"});
    ADD_FAILURE() << "two --vsock accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--vsock is given twice"), std::string::npos) << e.what();
  }
  try {
    parse({"run", "--kernel", "k", "--vsock", "cid=2"});
    ADD_FAILURE() << "the host's CID accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("from 3 to 4294967294"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse({"run", "--kernel", "k", "--vsock"}), UsageError) << "needs a value";
  EXPECT_NE(help_text().find("--vsock cid=N"), std::string::npos);
}

// --fs: one shared folder each, tags and sockets their own; their slots
// after the vsock device and before the entropy device.
TEST(Options, FsSharesTakeTheSlotsAfterVsockEachWithItsOwnTagAndSocket) {
  const RunOptions o = parse({"run", "--kernel", "k", "--fs", "tag=a,socket=/run/a.sock", "--vsock", "cid=3",
                              "--fs=tag=b,socket=/run/b.sock", "--disk", "d.img"})
                           .run;
  ASSERT_EQ(o.shares.size(), 2u);
  EXPECT_EQ(o.shares[1].tag, "b");
  EXPECT_EQ(o.shares[1].socket, "/run/b.sock");
  std::vector<std::string> slots;
  for (const VirtioDevicePlan& p : plan_virtio_devices(o, 1)) slots.push_back(p.name + " " + p.type);
  EXPECT_EQ(slots, (std::vector<std::string>{"disk0 virtio-blk", "vsock0 virtio-vsock", "fs0 virtio-fs",
                                             "fs1 virtio-fs", "rng0 virtio-rng"}));
  for (const auto& [args, words] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--fs", "tag=a,socket=x", "--fs", "tag=a,socket=y"}, "tag a is already another --fs's"},
           {{"--fs", "tag=a,socket=x", "--fs", "tag=b,socket=x"}, "start one virtiofsd per folder"},
           {{"--fs", "tag=a"}, "no socket"}}) {
    std::vector<std::string> line{"run", "--kernel", "k"};
    line.insert(line.end(), args.begin(), args.end());
    try {
      parse(line);
      ADD_FAILURE() << words << ": accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(help_text().find("--fs tag=NAME,socket=PATH"), std::string::npos);
}

TEST(Options, RngIsOnUnlessTurnedOff) {
  EXPECT_TRUE(parse({"run", "--kernel", "k"}).run.rng) << "every guest gets an entropy device by default";
  EXPECT_TRUE(parse({"run", "--kernel", "k", "--rng", "on"}).run.rng);
  EXPECT_FALSE(parse({"run", "--kernel", "k", "--rng=off"}).run.rng);
  for (const char* bad : {"yes", "ON", "0", ""}) {
    try {
      parse({"run", "--kernel", "k", std::string("--rng=") + bad});
      ADD_FAILURE() << "--rng " << bad << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("choose on"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("off"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse({"run", "--kernel", "k", "--rng", "on", "--rng", "off"}), UsageError) << "given once";
  EXPECT_THROW(parse({"run", "--kernel", "k", "--rng"}), UsageError) << "needs a value";
  EXPECT_NE(help_text().find("--rng on|off"), std::string::npos);
}

// Without queues=, a disk has one request queue per vCPU (at most 16):
// Linux uses min(num_queues, CPUs) of them.
TEST(Options, DisksGetOneQueuePerVcpuUnlessTold) {
  EXPECT_EQ(parse({"run", "--kernel", "k", "--disk", "a.img"}).run.disks[0].queues, 1u);
  EXPECT_EQ(parse({"run", "--kernel", "k", "--disk", "a.img", "--cpus", "4"}).run.disks[0].queues, 4u);
  EXPECT_EQ(parse({"run", "--kernel", "k", "--cpus", "40", "--disk", "a.img"}).run.disks[0].queues,
            block::kMaxDiskQueues);
  const RunOptions o =
      parse({"run", "--kernel", "k", "--disk", "a.img,queues=2", "--disk", "b.img", "--cpus", "3"}).run;
  EXPECT_EQ(o.disks[0].queues, 2u);
  EXPECT_EQ(o.disks[1].queues, 3u);
  EXPECT_EQ(parse({"run", "--kernel", "k", "--disk", "a.img,queues=8"}).run.disks[0].queues, 8u)
      << "more queues than vCPUs is the user's choice";
}

TEST(Options, SeccompUserAndGroup) {
  const RunOptions d = parse({"run", "--kernel", "Image"}).run;
  EXPECT_EQ(d.seccomp, SeccompMode::kOn) << "confined unless told otherwise";
  EXPECT_FALSE(d.user || d.group);
  for (auto [word, mode] : {std::pair{"on", SeccompMode::kOn}, std::pair{"log", SeccompMode::kLog},
                            std::pair{"off", SeccompMode::kOff}})
    EXPECT_EQ(parse({"run", "--kernel", "Image", std::string("--seccomp=") + word}).run.seccomp, mode);
  try {
    parse({"run", "--kernel", "Image", "--seccomp", "strict"});
    FAIL() << "--seccomp strict accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("choose on"), std::string::npos) << e.what();
  }
  const RunOptions u = parse({"run", "--kernel", "Image", "--user", "kvmmio", "--group=kvm"}).run;
  EXPECT_EQ(u.user, "kvmmio");
  EXPECT_EQ(u.group, "kvm");
  EXPECT_THROW(parse({"run", "--kernel", "Image", "--user="}), UsageError);
}

TEST(Options, OnRebootRestartsByDefault) {
  EXPECT_EQ(parse({"run", "--kernel", "Image"}).run.on_reboot, OnReboot::kRestart)
      << "a guest's reboot boots it again in place unless told otherwise";
  EXPECT_EQ(parse({"run", "--kernel", "Image", "--on-reboot", "exit"}).run.on_reboot, OnReboot::kExit);
  EXPECT_EQ(parse({"run", "--kernel", "Image", "--on-reboot=restart"}).run.on_reboot, OnReboot::kRestart);
  for (const char* bad : {"reboot", "Exit", "3"}) {
    try {
      parse({"run", "--kernel", "Image", std::string("--on-reboot=") + bad});
      FAIL() << "--on-reboot " << bad << " accepted";
    } catch (const UsageError& e) {
      // The message names the option, the value and both choices.
      const std::string m = e.what();
      EXPECT_NE(m.find(std::string("--on-reboot ") + bad + ":"), std::string::npos) << m;
      EXPECT_NE(m.find("choose restart"), std::string::npos) << m;
      EXPECT_NE(m.find("exit ("), std::string::npos) << m;
    }
  }
  EXPECT_THROW(parse({"run", "--kernel", "Image", "--on-reboot", "exit", "--on-reboot", "exit"}), UsageError)
      << "given once, as every option but --net and --disk";
}

TEST(Options, NetMayBeGivenSeveralTimes) {
  const Command c = parse_command_line(
      {"run", "--kernel", "k", "--net", "tap=a", "--net", "tap=b,vhost=off,irq=relay"});
  ASSERT_EQ(c.run.nets.size(), 2u);
  EXPECT_EQ(c.run.nets[0].tap, "a");
  EXPECT_EQ(c.run.nets[1].vhost, net::VhostMode::kOff);
  EXPECT_EQ(c.run.nets[1].transport.irq, virtio::IrqMode::kRelay);
}

// --net vhost-user=PATH beside a tap: each socket once (a backend's socket
// serves one device), and the slot's type says which kind it is.
TEST(Options, VhostUserNetsTakeASocketEachBesideTaps) {
  const RunOptions o = parse({"run", "--kernel", "k", "--net", "vhost-user=/run/a.sock", "--net", "tap=t",
                              "--net", "vhost-user=/run/b.sock"})
                           .run;
  ASSERT_EQ(o.nets.size(), 3u);
  std::vector<std::string> slots;
  for (const VirtioDevicePlan& p : plan_virtio_devices(o, 1)) slots.push_back(p.name + " " + p.type);
  EXPECT_EQ(slots, (std::vector<std::string>{"net0 vhost-user-net", "net1 virtio-net", "net2 vhost-user-net",
                                             "rng0 virtio-rng"}));
  try {
    parse_command_line({"run", "--kernel", "k", "--net", "vhost-user=/run/a.sock", "--net", "vhost-user=/run/a.sock"});
    ADD_FAILURE() << "one socket taken twice";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("that socket is already another --net's"), std::string::npos) << e.what();
  }
}

// Register reads from the read-only mirror unless asked otherwise (the
// library's default; the slot falls back to regs=trap without
// KVM_CAP_READONLY_MEM).
TEST(Options, NetAndConsoleTakeRegsMirrorByDefault) {
  const Command c = parse_command_line({"run", "--kernel", "k", "--net", "tap=a", "--net",
                                        "tap=b,regs=trap", "--console", "virtio,regs=trap"});
  ASSERT_EQ(c.run.nets.size(), 2u);
  EXPECT_EQ(c.run.nets[0].transport.regs, virtio::RegsMode::kMirror);
  EXPECT_EQ(c.run.nets[1].transport.regs, virtio::RegsMode::kTrap);
  EXPECT_EQ(c.run.console_transport.regs, virtio::RegsMode::kTrap);
  EXPECT_EQ(parse_command_line({"run", "--kernel", "k", "--console", "virtio"}).run.console_transport.regs,
            virtio::RegsMode::kMirror);
  EXPECT_THROW(parse_command_line({"run", "--kernel", "k", "--net", "tap=a,regs=maybe"}), UsageError);
}

TEST(Options, VirtioConsoleTakesTransportKeys) {
  const RunOptions plain = parse({"run", "--kernel", "k", "--console", "virtio"}).run;
  EXPECT_EQ(plain.console, ConsoleKind::kVirtio);
  EXPECT_EQ(plain.console_transport.version, virtio::kVersionModern);
  const RunOptions v1 =
      parse({"run", "--kernel", "k", "--console=virtio,version=1,notify=trap,irq=relay"}).run;
  EXPECT_EQ(v1.console, ConsoleKind::kVirtio);
  EXPECT_EQ(v1.console_transport.version, virtio::kVersionLegacy);
  EXPECT_EQ(v1.console_transport.notify, virtio::NotifyMode::kTrap);
  EXPECT_EQ(v1.console_transport.irq, virtio::IrqMode::kRelay);
  EXPECT_EQ(v1.kernel_cmdline(), "console=hvc0");
  EXPECT_EQ(parse({"run", "--kernel", "k", "--console", "serial"}).run.console, ConsoleKind::kSerial);
}

TEST(Options, ConsoleTakesADestination) {
  using Kind = ConsoleDestination::Kind;
  const RunOptions plain = parse({"run", "--kernel", "k"}).run;
  EXPECT_EQ(plain.console_to.kind, Kind::kStdio);
  const RunOptions pty = parse({"run", "--kernel", "k", "--console", "serial,pty"}).run;
  EXPECT_EQ(pty.console, ConsoleKind::kSerial);
  EXPECT_EQ(pty.console_to.kind, Kind::kPty);
  const RunOptions file = parse({"run", "--kernel", "k", "--console", "serial,file=/var/log/vm0"}).run;
  EXPECT_EQ(file.console_to.kind, Kind::kFile);
  EXPECT_EQ(file.console_to.path, "/var/log/vm0");
  // The destination may stand anywhere among virtio's transport keys.
  const RunOptions sock =
      parse({"run", "--kernel", "k", "--console", "virtio,version=1,socket=/run/vm0.sock,irq=relay"}).run;
  EXPECT_EQ(sock.console, ConsoleKind::kVirtio);
  EXPECT_EQ(sock.console_to.kind, Kind::kSocket);
  EXPECT_EQ(sock.console_to.path, "/run/vm0.sock");
  EXPECT_EQ(sock.console_to.to_string(), "socket=/run/vm0.sock");
  EXPECT_EQ(sock.console_transport.version, virtio::kVersionLegacy);
  EXPECT_EQ(sock.console_transport.irq, virtio::IrqMode::kRelay);
  EXPECT_EQ(parse({"run", "--kernel", "k", "--console", "virtio,stdio"}).run.console_to.kind, Kind::kStdio);
}

TEST(Options, MemCountsMiBAndTakesBinarySuffixes) {
  auto mem = [](const char* v) { return parse({"run", "--kernel", "k", "--mem", v}).run.mem; };
  EXPECT_EQ(mem("512"), uint64_t{512} << 20);  // as lkvm, crosvm and QEMU read it
  EXPECT_EQ(mem("1024"), uint64_t{1} << 30);
  EXPECT_EQ(mem("2048K"), uint64_t{2} << 20);
  EXPECT_EQ(mem("512M"), uint64_t{512} << 20);
  EXPECT_EQ(mem("2g"), uint64_t{2} << 30);
  EXPECT_EQ(parse({"run", "--kernel", "k", "--mem=64"}).run.mem, uint64_t{64} << 20);
}

TEST(Options, HugeMemIsTooLargeNotWrapped) {
  // 2^64 - 1 MiB would wrap to a small byte count; it is refused as too
  // large, and no "--mem 0M" is suggested.
  for (const char* huge : {"18446744073709551615", "17592186044416", "99999999999999999999999"}) {
    try {
      parse({"run", "--kernel", "k", "--mem", huge});
      ADD_FAILURE() << "accepted --mem " << huge;
    } catch (const UsageError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(std::string("--mem ") + huge + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
      EXPECT_EQ(msg.find("0M"), std::string::npos) << msg;
    }
  }
}

TEST(Options, ValuesThatLookLikeOptionsNeedTheEqualsForm) {
  EXPECT_EQ(parse({"run", "--kernel", "k", "--cmdline=--x"}).run.cmdline_extra, "--x");
  EXPECT_EQ(parse({"run", "--kernel=--odd-name"}).run.kernel, "--odd-name");
}

TEST(Options, OutputFilesMayBeStdoutAndLogLevelIsTaken) {
  const RunOptions o =
      parse({"run", "--kernel", "k", "--dump-dtb", "-", "--stats=-", "--log-level", "debug"}).run;
  EXPECT_EQ(o.dump_dtb, "-");
  EXPECT_EQ(o.stats, "-");
  EXPECT_EQ(o.log_level, LogLevel::kDebug);
  EXPECT_EQ(parse({"run", "--kernel", "k"}).run.log_level, LogLevel::kInfo);
}

TEST(Options, NetDevicesNeedTapsOfTheirOwn) {
  const RunOptions o = parse({"run", "--kernel", "k", "--net", "tap=a,mac=02:00:00:00:00:01", "--net",
                              "tap=b,mac=02:00:00:00:00:02"})
                           .run;
  EXPECT_EQ(o.nets.size(), 2u);
}

struct BadCase {
  std::vector<std::string> args;
  std::vector<std::string> message_has;  // the problem and the fix
};

class OptionErrors : public testing::TestWithParam<BadCase> {};

TEST_P(OptionErrors, AreUsageErrorsThatNameTheFix) {
  const BadCase& c = GetParam();
  try {
    parse(c.args);
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    // A UsageError is a UserError: main() maps it to exit status 2.
    const UserError& as_user_error = e;
    const std::string msg = as_user_error.what();
    for (const auto& part : c.message_has)
      EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  }
}

const std::string kHugeCmdline(3000, 'x');

INSTANTIATE_TEST_SUITE_P(
    Options, OptionErrors,
    testing::Values(
        BadCase{{}, {"no command", "kvmmio run --kernel IMAGE"}},
        BadCase{{"boot"}, {"unknown command 'boot'", "run"}},
        BadCase{{"--kernel", "x"}, {"comes after the command", "kvmmio run --kernel"}},
        BadCase{{"run"}, {"--kernel IMAGE is required"}},
        BadCase{{"run", "--initrd", "i"}, {"--kernel IMAGE is required"}},
        BadCase{{"run", "--kernel"}, {"--kernel needs a value", "arm64 Image"}},
        BadCase{{"run", "--kernel="}, {"--kernel needs a file"}},
        BadCase{{"run", "--kernel", "k", "--kernel", "k2"}, {"--kernel is given twice", "once"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=a,vhost=maybe"},
                {"vhost=maybe", "on, off or auto"}},
        BadCase{{"run", "--kernel", "k", "--net", "vhost=on"}, {"needs tap=NAME"}},
        BadCase{{"run", "--kernel", "k", "--disk", "a.img", "--disk", "a.img"},
                {"--disk a.img", "already another --disk's", "an image of its own"}},
        BadCase{{"run", "--kernel", "k", "--disk", "a.img,ro=maybe"}, {"ro=maybe", "choose on or off"}},
        BadCase{{"run", "--kernel", "k", "--disk", "a.img,cache=fast"}, {"cache=fast", "writeback", "none"}},
        BadCase{{"run", "--kernel", "k", "--disk", "a.img,serial=abcdefghijklmnopqrstu"}, {"1 to 20 bytes"}},
        BadCase{{"run", "--kernel", "k", "--disk", "a.img,irq=msi"}, {"irq=msi", "ro, serial, cache, engine and queues"}},
        BadCase{{"run", "--kernel", "k", "--disk", "a.img,queues=0"}, {"queues=0", "from 1 to 16", "one per vCPU"}},
        BadCase{{"run", "--kernel", "k", "--disk", "a.img,queues=17"}, {"queues=17", "from 1 to 16"}},
        BadCase{{"run", "--kernel", "k", "--disk=,ro=on"}, {"the image comes first"}},
        BadCase{{"run", "--kernel", "k", "--bogus"}, {"unknown option '--bogus'", "--help"}},
        BadCase{{"run", "--kernel", "k", "extra"}, {"unexpected argument 'extra'", "--"}},
        BadCase{{"run", "--kernel", "k", "-m", "1G"}, {"unknown option '-m'", "start with --"}},
        BadCase{{"run", "--kernel", "--mem", "1G"}, {"--kernel needs a value", "--kernel=VALUE"}},
        BadCase{{"run", "--kernel", "k", "--stats", "--mem", "1G"}, {"--stats needs a value"}},
        BadCase{{"run", "--kernel", "k", "--cpus", "0"}, {"--cpus 0", "from 1 to 123"}},
        BadCase{{"run", "--kernel", "k", "--cpus", "124"},
                {"--cpus 124", "from 1 to 123", "GICv2 allows at most 8"}},
        BadCase{{"run", "--kernel", "k", "--cpus", "two"}, {"--cpus two", "whole number"}},
        BadCase{{"run", "--kernel", "k", "--cpus", "2x"}, {"--cpus 2x"}},
        BadCase{{"run", "--kernel", "k", "--cpus", "+2"}, {"--cpus +2", "not a whole number"}},
        BadCase{{"run", "--kernel", "k", "--cpus", " 2"}, {"--cpus  2", "not a whole number"}},
        BadCase{{"run", "--kernel", "k", "--mem", "0"}, {"--mem 0", "e.g. --mem 512"}},
        BadCase{{"run", "--kernel", "k", "--mem", "1536K"}, {"--mem 1536K", "whole number of MiB", "--mem 2)"}},
        BadCase{{"run", "--kernel", "k", "--mem", "+512"}, {"--mem +512", "not a size"}},
        BadCase{{"run", "--kernel", "k", "--mem", "512 "}, {"--mem 512 ", "not a size"}},
        BadCase{{"run", "--kernel", "k", "--mem", "2000G"},
                {"--mem 2000G", "40-bit", "at most --mem 1023G"}},
        BadCase{{"run", "--kernel", "k", "--mem", "lots"}, {"--mem lots", "not a size"}},
        BadCase{{"run", "--kernel", "k", "--gic", "v4"}, {"--gic v4", "auto, v3 or v2"}},
        BadCase{{"run", "--kernel", "k", "--gic", "3"}, {"--gic 3", "auto, v3 or v2"}},
        BadCase{{"run", "--kernel", "k", "--console", "tty"},
                {"--console tty", "serial", "virtio"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,version=3"},
                {"--console virtio", "version=3", "version=1 (legacy) or version=2"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,mtu=1500"},
                {"--console virtio", "unknown virtio-mmio option mtu", "version=1|2"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,legacy"},
                {"--console virtio", "'legacy' is not KEY=VALUE"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,"},
                {"--console virtio,", "missing after the comma"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,version=1,"},
                {"--console virtio,version=1,", "a comma at the end"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,version=1,version=2"},
                {"--console virtio,version=1,version=2", "version= is given twice"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,irq= relay"},
                {"--console virtio,irq= relay", "irq=irqfd or irq=relay"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=t0,irq=msi"},
                {"--net irq=msi", "irq=irqfd or irq=relay"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=a,tap=b"}, {"--net tap=a,tap=b", "given twice"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=a,"}, {"--net tap=a,", "a comma at the end"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=a/b"}, {"--net tap=a/b", "no '/'"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=a,mac=00:00:00:00:00:00"}, {"--net mac=", "all-zero"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=a", "--net", "tap=a"},
                {"tap a is already another --net's"}},
        BadCase{{"run", "--kernel", "k", "--net", "tap=a,mac=02:00:00:00:00:01", "--net",
                 "tap=b,mac=02:00:00:00:00:01"},
                {"--net tap=b,mac=02:00:00:00:00:01", "MAC is already another --net's"}},
        BadCase{{"run", "--kernel", "k", "--log-level", "verbose"},
                {"--log-level verbose", "debug, info, warn or error"}},
        BadCase{{"run", "--kernel", "k", "--console", "serial,version=1"},
                {"--console serial,version=1", "serial takes only a destination", "virtio,version=1"}},
        BadCase{{"run", "--kernel", "k", "--console", "serial,pty,socket=/tmp/s"},
                {"--console serial,pty,socket=/tmp/s", "two destinations", "keep one"}},
        BadCase{{"run", "--kernel", "k", "--console", "serial,file="},
                {"--console serial,file=", "needs a path", "file=guest.log"}},
        BadCase{{"run", "--kernel", "k", "--console", "virtio,socket="},
                {"socket= needs a path", "socket=/run/kvmmio/vm0.console"}},
        BadCase{{"run", "--kernel", "k", "--console", "serial,pty=/dev/pts/3"},
                {"pty takes no value", "--console serial,pty"}},
        BadCase{{"run", "--kernel", "k", "--console", "serial,socket=/" + std::string(120, 's')},
                {"the socket path is 121 bytes", "at most 107", "shorter"}},
        BadCase{{"run", "--kernel", "k", "--console", "serial,tty"},
                {"--console serial,tty", "serial takes only a destination", "stdio, file=PATH, pty, socket=PATH"}},
        BadCase{{"run", "--kernel", "k", "--console", "hvc,pty"},
                {"--console hvc,pty", "serial", "virtio", "--console serial,pty"}},
        BadCase{{"run", "--kernel", "k", "--stats"}, {"--stats needs a value"}},
        BadCase{{"run", "--kernel", "k", "--dump-dtb="}, {"--dump-dtb needs a file"}},
        BadCase{{"run", "--kernel", "k", "--cmdline", kHugeCmdline},
                {"--cmdline: the kernel command line is 3016 bytes", "2047", "shorten"}},
        BadCase{{"run", "--kernel", "k", "--cmdline-replace", kHugeCmdline},
                {"--cmdline-replace: the kernel command line is 3000 bytes", "2047", "shorten"}},
        BadCase{{"run", "--kernel", "k", "--cmdline", "quiet", "--cmdline-replace", "console=hvc0"},
                {"--cmdline and --cmdline-replace: give one", "console=ttyAMA0"}}));

TEST(Options, LargestValuesAreAccepted) {
  const RunOptions o = parse({"run", "--kernel", "k", "--cpus", "123", "--mem", "1023G"}).run;
  EXPECT_EQ(o.cpus, layout::kMaxCpusGicV3);
  EXPECT_EQ(o.mem, layout::kMaxRamSize);
}

}  // namespace
}  // namespace kvmmio::vmm
