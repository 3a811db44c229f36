// SPDX-License-Identifier: BSD-2-Clause
// TapMonitor on this machine's real taps, and the socket filter that keeps
// the host's other link messages away from it: the filter program itself
// (run by the kernel on a datagram socket), then the monitor woken only by
// its own tap, whose down, up, removal and return (a new ifindex) are all
// still reported.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "../virtio/harness.h"
#include "hw/net/bridge.h"
#include "hw/net/tap_link_filter.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/tap_monitor.h"
#include "link_control.h"

namespace kvmmio::net {
namespace {

using Event = TapMonitor::Event;
using virtio::test::eventually;

// --- The filter program ------------------------------------------------------
// A classic BPF socket filter runs on AF_UNIX datagram sockets too, on
// exactly the bytes sent: link messages built here, in host byte order as
// the kernel writes them, go through tap_link_filter() or are dropped.
class FilteredSocket {
 public:
  explicit FilteredSocket(int ifindex) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error("socketpair");
    sender_ = UniqueFd(sv[0]);
    receiver_ = UniqueFd(sv[1]);
    const std::vector<sock_filter> program = tap_link_filter(ifindex);
    const sock_fprog fprog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
    if (::setsockopt(receiver_.get(), SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog)) != 0)
      throw std::runtime_error("SO_ATTACH_FILTER");
  }

  // Whether a message of this type, family and index (cut to `length`
  // bytes, if given) gets through.
  bool passes(uint16_t type, unsigned char family, int index, size_t length = sizeof(Message)) {
    Message m{};
    m.h.nlmsg_len = sizeof(m);
    m.h.nlmsg_type = type;
    m.i.ifi_family = family;
    m.i.ifi_index = index;
    m.i.ifi_flags = IFF_UP;
    if (::send(sender_.get(), &m, length, 0) != static_cast<ssize_t>(length)) throw std::runtime_error("send");
    Message got;
    return ::recv(receiver_.get(), &got, sizeof(got), MSG_DONTWAIT) == static_cast<ssize_t>(length);
  }

 private:
  struct Message {
    nlmsghdr h;
    ifinfomsg i;
  };
  UniqueFd sender_, receiver_;
};

TEST(TapLinkFilter, PassesGenericLinkMessagesAboutTheTapOnly) {
  FilteredSocket s(7);
  EXPECT_TRUE(s.passes(RTM_NEWLINK, AF_UNSPEC, 7));
  EXPECT_TRUE(s.passes(RTM_DELLINK, AF_UNSPEC, 7));
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_UNSPEC, 8)) << "another interface";
  EXPECT_FALSE(s.passes(RTM_DELLINK, AF_UNSPEC, 8)) << "another interface";
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_UNSPEC, 7 << 24)) << "the index read in the wrong byte order";
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_BRIDGE, 7)) << "a bridge port's state";
  EXPECT_FALSE(s.passes(RTM_DELLINK, AF_BRIDGE, 7)) << "leaving a bridge";
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_INET6, 7)) << "IPv6's flags";
  EXPECT_FALSE(s.passes(RTM_NEWADDR, AF_UNSPEC, 7)) << "not a link message";
  EXPECT_FALSE(s.passes(RTM_GETLINK, AF_UNSPEC, 7)) << "not a notification";
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_UNSPEC, 7, NLMSG_HDRLEN + 4)) << "cut before the index";
  FilteredSocket big(0x01020304);  // every byte of the index compared
  EXPECT_TRUE(big.passes(RTM_NEWLINK, AF_UNSPEC, 0x01020304));
  EXPECT_FALSE(big.passes(RTM_NEWLINK, AF_UNSPEC, 0x04030201));
  EXPECT_FALSE(big.passes(RTM_NEWLINK, AF_UNSPEC, 0x01020305));
}

TEST(TapLinkFilter, WithoutAnIndexPassesGenericLinkMessagesAboutAnyInterface) {
  FilteredSocket s(0);
  EXPECT_TRUE(s.passes(RTM_NEWLINK, AF_UNSPEC, 8));
  EXPECT_TRUE(s.passes(RTM_NEWLINK, AF_UNSPEC, 123456));
  EXPECT_TRUE(s.passes(RTM_DELLINK, AF_UNSPEC, 9));
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_BRIDGE, 8));
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_INET6, 8));
  EXPECT_FALSE(s.passes(RTM_NEWADDR, AF_UNSPEC, 8));
  EXPECT_FALSE(s.passes(RTM_NEWLINK, AF_UNSPEC, 8, NLMSG_HDRLEN)) << "no ifinfomsg";
}

// --- The monitor ---------------------------------------------------------------

// A TapMonitor on a loop of its own (its wake-ups are the loop's
// dispatches), with the events it reported.
struct Watched {
  explicit Watched(const std::string& name)
      : monitor(loop, lock, name, [this](Event e) {
          std::lock_guard g(mutex);
          events.push_back(e);
        }) {}
  std::vector<Event> seen() {
    std::lock_guard g(mutex);
    return events;
  }
  // Waits for the n-th event; then the loop has finished what it started
  // (a filter change after the event included).
  bool reported(size_t n) {
    const bool ok = eventually([&] { return seen().size() >= n; });
    loop.flush();
    return ok;
  }

  EventLoop loop;
  DeviceLock lock;
  std::mutex mutex;
  std::vector<Event> events;
  TapMonitor monitor;  // last: its callback uses the above
};

// Another interface's life: created, up, down, up, removed. rtnetlink
// queues (or the filter drops) each notification before the call that
// caused it returns, so once this returns and the loop is flushed, any
// message that got through has been counted.
void churn_another_interface(const std::string& name) {
  Tap other(name);
  other.set_link(true);
  other.set_link(false);
  other.set_link(true);
}  // closing its fds removes it

// A tap that is down sends nothing on its own (a carrier change is
// announced only while it is up); then only the test's own changes are
// notified about it.
TEST(TapMonitor, OtherInterfacesDoNotWakeIt) {
  Tap own("kvmtm0");
  Watched w("kvmtm0");
  w.loop.flush();
  const uint64_t messages = w.monitor.messages(), wakeups = w.loop.dispatches();
  churn_another_interface("kvmtm1");
  w.loop.flush();
  EXPECT_EQ(w.monitor.messages(), messages) << "another interface's link messages reached the monitor";
  EXPECT_EQ(w.loop.dispatches(), wakeups) << "another interface woke the event loop";
  own.set_link(true);
  ASSERT_TRUE(w.reported(1));
  EXPECT_EQ(w.seen(), std::vector<Event>{Event::kUp});
  EXPECT_GT(w.monitor.messages(), messages);
}

// The tap as a bridge port: the bridge's messages about its port (family
// AF_BRIDGE: here a port cost changed through sysfs, which sends only
// that) do not wake the monitor either.
TEST(TapMonitor, BridgePortMessagesAboutTheTapDoNotWakeIt) {
  test::TestBridge br("kvmtmbr0");
  if (!br.created()) GTEST_SKIP() << "cannot create a bridge here (CAP_NET_ADMIN, bridge module)";
  Tap own("kvmtm2");
  add_to_bridge("kvmtm2", "kvmtmbr0");
  Watched w("kvmtm2");
  w.loop.flush();
  const uint64_t messages = w.monitor.messages(), wakeups = w.loop.dispatches();
  std::ofstream("/sys/class/net/kvmtm2/brport/path_cost") << "7\n";
  w.loop.flush();
  EXPECT_EQ(w.monitor.messages(), messages) << "an AF_BRIDGE message reached the monitor";
  EXPECT_EQ(w.loop.dispatches(), wakeups);
  own.set_link(true);
  ASSERT_TRUE(w.reported(1));
  EXPECT_EQ(w.seen(), std::vector<Event>{Event::kUp});
}

// Down, up, removed, an interface of that name created again (a new
// ifindex: the filter has to let it through while the index is unknown),
// and afterwards the new interface's changes are reported while another
// interface's are still kept out.
TEST(TapMonitor, TheTapsDownUpRemovalAndReturnAreAllReported) {
  const std::string name = "kvmtm3";
  test::LinkCleanup cleanup(name);  // the re-created tap is persistent
  Tap own(name);
  const int first_index = own.ifindex();
  Watched w(name);
  EXPECT_TRUE(w.monitor.present());
  own.set_link(true);
  ASSERT_TRUE(w.reported(1));
  own.set_link(false);
  ASSERT_TRUE(w.reported(2));
  test::delete_link(first_index);
  ASSERT_TRUE(w.reported(3));
  EXPECT_FALSE(w.monitor.present());
  // Absent: other interfaces' messages get through (any of them could be
  // the new one) and are looked at, but report nothing.
  churn_another_interface("kvmtm4");
  w.loop.flush();
  EXPECT_EQ(w.seen().size(), 3u);

  test::create_persistent_tap(name);
  ASSERT_TRUE(w.reported(4));
  EXPECT_TRUE(w.monitor.present());
  EXPECT_NE(static_cast<int>(::if_nametoindex(name.c_str())), first_index);
  own.reattach();  // the same fds on the new interface, as TapSupervisor does
  w.loop.flush();
  const uint64_t messages = w.monitor.messages(), wakeups = w.loop.dispatches();
  churn_another_interface("kvmtm4");
  w.loop.flush();
  EXPECT_EQ(w.monitor.messages(), messages) << "the filter did not narrow to the new interface";
  EXPECT_EQ(w.loop.dispatches(), wakeups);
  own.set_link(true);
  ASSERT_TRUE(w.reported(5));
  own.set_link(false);
  ASSERT_TRUE(w.reported(6));
  EXPECT_EQ(w.seen(), (std::vector<Event>{Event::kUp, Event::kDown, Event::kRemoved, Event::kAppeared,
                                          Event::kUp, Event::kDown}));
}

// No interface of that name at the start: the monitor waits for one with
// the filter open to every index, then narrows to the one that came.
TEST(TapMonitor, ATapThatIsNotThereYetIsReportedWhenItAppears) {
  const std::string name = "kvmtm5";
  test::LinkCleanup cleanup(name);
  test::delete_link(name);  // left over by an interrupted run
  Watched w(name);
  EXPECT_FALSE(w.monitor.present());
  test::create_persistent_tap(name);
  ASSERT_TRUE(w.reported(1));
  EXPECT_EQ(w.seen(), std::vector<Event>{Event::kAppeared});
  const uint64_t messages = w.monitor.messages();
  churn_another_interface("kvmtm6");
  w.loop.flush();
  EXPECT_EQ(w.monitor.messages(), messages) << "the filter did not narrow to the interface that appeared";
  test::delete_link(name);
  ASSERT_TRUE(w.reported(2));
  EXPECT_EQ(w.seen().back(), Event::kRemoved);
}

}  // namespace
}  // namespace kvmmio::net
