// SPDX-License-Identifier: BSD-2-Clause
// The device options' words (vmm/cli/device_specs.h): --net, --disk, --fs
// and --vsock specifications and the transport's keys, parsed into the
// library's typed configurations; every refusal starts with the option as
// typed and names the fix. (tests/vmm/net_spec_test.cc has --net's
// refusals key by key.)
#include "vmm/cli/device_specs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/block/disk_image.h"
#include "test_files.h"
#include "vmm/cli/option_words.h"

namespace kvmmio::vmm {
namespace {

using namespace std::chrono_literals;

// The message, and whether it says `part`.
testing::AssertionResult Says(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << message << "\" does not say \"" << part << "\"";
}

// What parsing `spec` throws, or "" when it is accepted.
template <class Parse>
std::string refusal(Parse parse, const std::string& spec) {
  try {
    parse(spec);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}
std::string disk_error(const std::string& spec) { return refusal(parse_disk_spec, spec); }
std::string fs_error(const std::string& spec) { return refusal(parse_fs_spec, spec); }
std::string vsock_error(const std::string& spec) { return refusal(parse_vsock_spec, spec); }

TEST(TransportSpec, ParsesTheDeviceOptionWords) {
  virtio::TransportOptions o;
  set_transport_key(o, "version", "1");
  set_transport_key(o, "notify", "trap");
  set_transport_key(o, "irq", "relay");
  EXPECT_EQ(o.version, virtio::kVersionLegacy);
  EXPECT_EQ(o.notify, virtio::NotifyMode::kTrap);
  EXPECT_EQ(o.irq, virtio::IrqMode::kRelay);
  EXPECT_THROW(set_transport_key(o, "version", "3"), UserError);
  EXPECT_THROW(set_transport_key(o, "notify", "poll"), UserError);
  EXPECT_THROW(set_transport_key(o, "irq", "msi"), UserError);
  EXPECT_THROW(set_transport_key(o, "queues", "2"), UserError);
  EXPECT_TRUE(o.event_idx);
  set_transport_key(o, "event_idx", "off");
  EXPECT_FALSE(o.event_idx);
  set_transport_key(o, "event_idx", "on");
  EXPECT_TRUE(o.event_idx);
  EXPECT_THROW(set_transport_key(o, "event_idx", "1"), UserError);
}

TEST(TransportSpec, RegsTakesMirrorAndTrap) {
  virtio::TransportOptions o;
  set_transport_key(o, "regs", "trap");
  EXPECT_EQ(o.regs, virtio::RegsMode::kTrap);
  set_transport_key(o, "regs", "mirror");
  EXPECT_EQ(o.regs, virtio::RegsMode::kMirror);
  EXPECT_THROW(set_transport_key(o, "regs", "maybe"), UserError);
}

TEST(NetSpec, ParsesEveryKey) {
  net::NetOptions o = parse_net_spec("tap=t0,vhost=off,irq=relay,notify=trap,version=1,"
                                   "mac=02:00:00:00:00:07,queues=2,mtu=9000");
  EXPECT_EQ(o.tap, "t0");
  EXPECT_EQ(o.vhost, net::VhostMode::kOff);
  EXPECT_EQ(o.transport.irq, virtio::IrqMode::kRelay);
  EXPECT_EQ(o.transport.notify, virtio::NotifyMode::kTrap);
  EXPECT_EQ(o.transport.version, virtio::kVersionLegacy);
  ASSERT_TRUE(o.mac);
  EXPECT_EQ((*o.mac)[5], 7);
  EXPECT_EQ(o.queue_pairs, 2);
  EXPECT_EQ(o.mtu, 9000);
  EXPECT_EQ(parse_net_spec("tap=x").vhost, net::VhostMode::kAuto);
}

TEST(NetSpec, RejectsBadSpecsNamingTheFix) {
  auto message = [](const char* spec) {
    try {
      parse_net_spec(spec);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("vhost=on").find("needs tap=NAME"), std::string::npos);
  EXPECT_NE(message("tap=a,vhost=maybe").find("on, off or auto"), std::string::npos);
  EXPECT_NE(message("tap=a,queues=0").find("1 to 16"), std::string::npos);
  EXPECT_NE(message("tap=a,mtu=20").find("68 to 65535"), std::string::npos);
  EXPECT_NE(message("tap=a,mac=01:00:00:00:00:01").find("multicast"), std::string::npos);
  EXPECT_NE(message("tap=a,mac=zz").find("six hex bytes"), std::string::npos);
  EXPECT_NE(message("tap=a,color=blue").find("unknown"), std::string::npos);
  EXPECT_NE(message("tap=a,color=blue").find("tap, vhost-user, vhost, mac, queues, mtu"), std::string::npos);
  EXPECT_NE(message("tap=a,irq=msi").find("irq"), std::string::npos);
  EXPECT_NE(message("tap").find("KEY=VALUE"), std::string::npos);
}

TEST(NetSpec, TheBridgeNameIsCheckedAtParseTime) {
  EXPECT_EQ(parse_net_spec("tap=t,bridge=br0").bridge, "br0");
  EXPECT_TRUE(parse_net_spec("tap=t").bridge.empty());
  try {
    parse_net_spec("tap=t,bridge=a/b");
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--net bridge=a/b"), std::string::npos) << e.what();
  }
}

TEST(DiskSpec, ParsesPathAndKeys) {
  const block::DiskOptions a = parse_disk_spec("/images/debian.img");
  EXPECT_EQ(a.path, "/images/debian.img");
  EXPECT_FALSE(a.read_only);
  EXPECT_EQ(a.cache, block::CacheMode::kWriteback);
  EXPECT_EQ(a.engine, block::EngineChoice::kDefault);
  EXPECT_EQ(parse_disk_spec("d.img,engine=io_uring").engine, block::EngineChoice::kIoUring);
  EXPECT_EQ(parse_disk_spec("d.img,engine=threads").engine, block::EngineChoice::kThreads);
  EXPECT_FALSE(a.queues) << "no queues= leaves the number to the VMM";
  EXPECT_EQ(parse_disk_spec("d.img,queues=1").queues, 1u);
  EXPECT_EQ(parse_disk_spec("d.img,queues=16").queues, block::kMaxDiskQueues);
  const block::DiskOptions b = parse_disk_spec("d.img,ro=on,serial=abc,cache=none,version=1,notify=trap");
  EXPECT_EQ(b.path, "d.img");
  EXPECT_TRUE(b.read_only);
  EXPECT_EQ(b.serial, "abc");
  EXPECT_EQ(b.cache, block::CacheMode::kNone);
  EXPECT_EQ(b.transport.version, 1u);
  EXPECT_EQ(b.transport.notify, virtio::NotifyMode::kTrap);
  EXPECT_FALSE(a.block_device) << "a block device only when asked for";
  EXPECT_TRUE(parse_disk_spec("/dev/vdb,device=on").block_device);
}

TEST(DiskSpec, RefusalsNameTheFix) {
  EXPECT_TRUE(Says(disk_error(""), "the image comes first"));
  EXPECT_TRUE(Says(disk_error(",ro=on"), "the image comes first"));
  EXPECT_TRUE(Says(disk_error("ro=on,d.img"), "path comes first"));
  EXPECT_TRUE(Says(disk_error("d.img,"), "missing after the comma"));
  EXPECT_TRUE(Says(disk_error("d.img,ro=yes"), "choose on or off"));
  EXPECT_TRUE(Says(disk_error("d.img,cache=unsafe"), "choose writeback"));
  EXPECT_TRUE(Says(disk_error("d.img,engine=aio"), "choose io_uring"));
  EXPECT_TRUE(Says(disk_error("d.img,serial=123456789012345678901"), "1 to 20 bytes"));
  for (const char* bad : {"d.img,queues=0", "d.img,queues=17", "d.img,queues=two", "d.img,queues=",
                          "d.img,queues=-1"}) {
    const std::string why = disk_error(bad);
    EXPECT_TRUE(Says(why, "from 1 to 16") && Says(why, "leave queues= out for one per vCPU")) << bad << ": " << why;
  }
  EXPECT_TRUE(Says(disk_error("d.img,colour=red"), "ro, serial, cache, engine and queues, and device"));
  EXPECT_TRUE(Says(disk_error("d.img,device=yes"), "choose on or off"));
  EXPECT_TRUE(Says(disk_error("d.img,ro=on,ro=off"), "ro"));
}

TEST(FsSpec, TakesATagAndASocket) {
  const fs::FsOptions o = parse_fs_spec("tag=share,socket=/run/vfs.sock");
  EXPECT_EQ(o.tag, "share");
  EXPECT_EQ(o.socket, "/run/vfs.sock");
  EXPECT_EQ(parse_fs_spec("socket=s,tag=" + std::string(36, 'x')).tag, std::string(36, 'x'));
  EXPECT_EQ(o.reply_timeout, vhost::VhostUserFrontend::kDefaultReplyTimeout);
}

// reply_timeout_ms: the bound on each of the backend's replies, 1 ms to 60 s.
TEST(FsSpec, TakesABoundedReplyTimeout) {
  EXPECT_EQ(parse_fs_spec("tag=a,socket=s,reply_timeout_ms=30000").reply_timeout, 30000ms);
  EXPECT_EQ(parse_fs_spec("tag=a,socket=s,reply_timeout_ms=1").reply_timeout, 1ms);
  for (const char* bad : {"0", "60001", "-1", "2s"}) {
    const std::string msg = fs_error(std::string("tag=a,socket=s,reply_timeout_ms=") + bad);
    EXPECT_EQ(msg.rfind(std::string("--fs reply_timeout_ms=") + bad, 0), 0u) << msg;
  }
}

TEST(FsSpec, RefusesWhatTheGuestCouldNotMountNamingTheFix) {
  const std::string long_tag = fs_error("tag=" + std::string(37, 'x') + ",socket=s");
  EXPECT_NE(long_tag.find("1 to 36 bytes"), std::string::npos) << long_tag;
  EXPECT_NE(fs_error("tag=a b,socket=s").find("printable ASCII"), std::string::npos);
  EXPECT_NE(fs_error("tag=caf\xc3\xa9,socket=s").find("printable ASCII"), std::string::npos);
  EXPECT_NE(fs_error("socket=s").find("no tag"), std::string::npos);
  EXPECT_NE(fs_error("tag=a").find("no socket"), std::string::npos);
  EXPECT_NE(fs_error("tag=a,socket=").find("socket= is empty"), std::string::npos);
  const std::string unknown = fs_error("tag=a,socket=s,cache=always");
  EXPECT_NE(unknown.find("unknown key 'cache'"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.rfind("--fs tag=a,socket=s,cache=always", 0), 0u) << "names what was typed: " << unknown;
  for (const char* spec : {"", "tag", "tag=a,tag=b,socket=s", "tag=,socket=s"})
    EXPECT_NE(fs_error(spec), "") << "'" << spec << "' accepted";
}

TEST(VsockSpec, TakesEveryCidFromThreeToTheLastBelowAny) {
  EXPECT_EQ(parse_vsock_spec("cid=3").cid, 3u);
  EXPECT_EQ(parse_vsock_spec("cid=1234").cid, 1234u);
  EXPECT_EQ(parse_vsock_spec("cid=4294967294").cid, 0xfffffffeu);
}

TEST(VsockSpec, RefusesReservedCidsNamingTheRange) {
  for (const char* spec : {"cid=0", "cid=1", "cid=2", "cid=4294967295"}) {
    const std::string e = vsock_error(spec);
    EXPECT_NE(e.find("reserved"), std::string::npos) << spec << ": " << e;
    EXPECT_NE(e.find("from 3 to 4294967294"), std::string::npos) << spec << ": " << e;
    EXPECT_EQ(e.rfind(std::string("--vsock ") + spec, 0), 0u) << "names what was typed: " << e;
  }
  const std::string wide = vsock_error("cid=4294967296");
  EXPECT_NE(wide.find("does not fit in 32 bits"), std::string::npos) << wide;
  EXPECT_NE(vsock_error("cid=99999999999999999999999").find("too large"), std::string::npos);
}

TEST(VsockSpec, RefusesWhatIsNotOneDecimalCid) {
  for (const char* spec : {"", "3", "cid=", "cid=-3", "cid=+3", "cid=0x10", "cid=3k", "cid= 3", "cid=3,cid=4",
                           "port=3", "cid=3,port=1", "cid=3,"}) {
    EXPECT_NE(vsock_error(spec), "") << "'" << spec << "' accepted";
  }
  EXPECT_NE(vsock_error("port=3").find("--vsock takes cid=N"), std::string::npos);
}

// The devices' messages in the program's words: the parsed options carry
// them, and the library's messages then name the option to give.
TEST(OptionWords, DiskMessagesNameTheDiskOptionAndTheKeyToGive) {
  const SettingWords& words = *option_words();
  EXPECT_EQ(words.named("disk", {"path", "a.img"}), "--disk a.img");
  EXPECT_EQ(words.named("disk", {"path", "a.img"}, {"engine", "io_uring"}), "--disk a.img,engine=io_uring");
  EXPECT_EQ(words.ask("disk", {"path", "a.img"}, {"read_only", "true"}), "give ro=on (--disk a.img,ro=on)");
  EXPECT_EQ(words.ask("disk", {"path", "a.img"}, {"block_device", "true"}),
            "give device=on (--disk a.img,device=on)");
  EXPECT_EQ(parse_disk_spec("a.img").words, option_words());

  // A second writer of one image: the lock's refusal in --disk words.
  const test::TempDir dir;
  const std::string image = dir.file("in-use.img");
  test::write_file(image, std::vector<uint8_t>(4096));
  block::DiskOptions first = parse_disk_spec(image);
  const block::DiskImage held = block::DiskImage::open(first);
  try {
    block::DiskImage::open(parse_disk_spec(image));
    ADD_FAILURE() << "a second writer opened " << image;
  } catch (const UserError& e) {
    const std::string why = e.what();
    EXPECT_TRUE(Says(why, "--disk " + image + ": the image is in use by PID " + std::to_string(::getpid())));
    EXPECT_TRUE(Says(why, "give ro=on (--disk " + image + ",ro=on) in every VMM that shares the image"));
  }
}

TEST(OptionWords, ABridgeIsNamedByItsNetOption) {
  const SettingWords& words = *option_words();
  EXPECT_EQ(words.named("net", {"tap", "t0"}, {"bridge", "br0"}), "--net tap=t0,bridge=br0");
  EXPECT_EQ(words.ask("net", {"tap", "t0"}, {"bridge", "br1"}), "give bridge=br1 (--net tap=t0,bridge=br1)");
  EXPECT_EQ(parse_net_spec("tap=t0").words, option_words());
}

}  // namespace
}  // namespace kvmmio::vmm
