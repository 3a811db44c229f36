// SPDX-License-Identifier: BSD-2-Clause
// The vhost-user front end against a backend of the test's own: a thread
// at the other end of a socketpair that speaks the protocol (receives each
// message with its fds, answers as the test says). The well-behaved
// backend checks what the front end sends: the handshake, the memory table
// whose fds map the guest's RAM, the vrings' fds. The hostile ones stall,
// close mid-message or answer wrong, and the front end must throw
// BackendError within its bound and refuse every later call.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "kvmmio/base/unique_fd.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/vhost/vhost_user_protocol.h"
#include "kvmmio/virtio/queue_layout.h"
#include "tests/vhost/test_backend.h"

namespace kvmmio::vhost {
namespace {

using user::Request;
using namespace std::chrono_literals;

using test::Message;
using test::TestBackend;

// The reply timeout where a test is not about time: long enough that a
// loaded machine (make check beside the nested platform) never reaches it.
constexpr auto kPatient = 30s;

constexpr uint64_t kDeviceFeatures = (1ull << 32) | (1ull << 0);  // VERSION_1 and a device bit
constexpr uint64_t kOfferedProtocol = (1ull << user::protocol_feature::kMq) |
                                      (1ull << user::protocol_feature::kReplyAck) |
                                      (1ull << user::protocol_feature::kConfig);

// A well-behaved backend: answers the handshake, acks what asks for it,
// and records what the tests look at.
struct GoodBackend {
  uint64_t features = kDeviceFeatures | (1ull << user::kFeatureProtocolFeatures);
  uint64_t protocol = kOfferedProtocol;
  uint64_t set_protocol = 0, set_features = 0;
  std::vector<Message> kept;  // SET_MEM_TABLE and the vring messages, with their fds
  std::mutex mutex;

  TestBackend::Answer answer() {
    return [this](TestBackend& b, Message& m) {
      switch (m.request()) {
        case Request::kGetFeatures: b.reply_u64(m, features); break;
        case Request::kGetProtocolFeatures: b.reply_u64(m, protocol); break;
        case Request::kSetProtocolFeatures: {
          std::lock_guard lock(mutex);
          set_protocol = m.u64();
          break;
        }
        case Request::kSetFeatures: {
          std::lock_guard lock(mutex);
          set_features = m.u64();
          break;
        }
        case Request::kGetQueueNum: b.reply_u64(m, 3); break;
        case Request::kGetVringBase: {
          auto s = m.as<user::VringState>();
          s.num = 77;
          b.reply(m, &s, sizeof(s));
          break;
        }
        case Request::kGetConfig: {
          auto h = m.as<user::ConfigHeader>();
          std::vector<uint8_t> out(sizeof(h) + h.size);
          std::memcpy(out.data(), &h, sizeof(h));
          for (uint32_t i = 0; i < h.size; ++i) out[sizeof(h) + i] = static_cast<uint8_t>(h.offset + i);
          b.reply(m, out.data(), static_cast<uint32_t>(out.size()));
          break;
        }
        default: break;
      }
      if (m.request() == Request::kSetMemTable || m.request() == Request::kSetVringAddr ||
          m.request() == Request::kSetVringKick || m.request() == Request::kSetVringCall ||
          m.request() == Request::kSetVringErr || m.request() == Request::kSetVringNum ||
          m.request() == Request::kSetVringBase) {
        std::lock_guard lock(mutex);
        kept.push_back(Message{m.header, m.payload, {}});
        for (auto& fd : m.fds) kept.back().fds.push_back(std::move(fd));
      }
      // Acked last: when the front end has the ack, the test sees the message.
      if (m.header.flags & user::kFlagNeedReply) b.reply_u64(m, 0);
      return true;
    };
  }
};

// A front end connected to a well-behaved backend, over 1 MiB of guest RAM.
class VhostUserSetUp : public ::testing::Test {
 protected:
  VhostUserSetUp() { memory.add_ram(0x4000'0000, 1 << 20); }
  GuestMemory memory;
  GoodBackend good;
  TestBackend backend{good.answer()};
  VhostUserFrontend front{backend.take_front(), "test", kPatient};
};

TEST(VhostUserFrontend, HandshakeNegotiatesOnlyTheProtocolFeaturesBothHave) {
  GoodBackend good;
  TestBackend backend(good.answer());
  VhostUserFrontend front(backend.take_front(), "test", kPatient);
  EXPECT_EQ(front.start(1ull << user::protocol_feature::kMq), good.features);
  // MQ asked for, REPLY_ACK always; CONFIG offered but not asked for.
  const uint64_t agreed = (1ull << user::protocol_feature::kMq) | (1ull << user::protocol_feature::kReplyAck);
  EXPECT_EQ(front.protocol_features(), agreed);
  EXPECT_EQ(front.queue_num(), 3u);
  front.set_features(kDeviceFeatures);  // acked (REPLY_ACK): the backend has it
  {
    std::lock_guard lock(good.mutex);
    EXPECT_EQ(good.set_protocol, agreed);
    // SET_FEATURES keeps the protocol-features bit once negotiated.
    EXPECT_EQ(good.set_features, kDeviceFeatures | (1ull << user::kFeatureProtocolFeatures));
  }
  EXPECT_EQ(backend.requests(),
            (std::vector<Request>{Request::kSetOwner, Request::kGetFeatures, Request::kGetProtocolFeatures,
                                  Request::kSetProtocolFeatures, Request::kGetQueueNum, Request::kSetFeatures}));
  EXPECT_THROW(front.set_features(1ull << 40), std::invalid_argument);
  EXPECT_TRUE(front.usable());
}

TEST(VhostUserFrontend, WithoutProtocolFeaturesNothingAsksForAReply) {
  GoodBackend good;
  good.features = kDeviceFeatures;
  TestBackend backend([&](TestBackend& b, Message& m) {
    // A NEED_REPLY this backend never negotiated would go unanswered.
    EXPECT_EQ(m.header.flags & user::kFlagNeedReply, 0u) << user::to_string(m.request());
    return good.answer()(b, m);
  });
  VhostUserFrontend front(backend.take_front(), "test", kPatient);
  front.start(1ull << user::protocol_feature::kMq);
  EXPECT_EQ(front.protocol_features(), 0u);
  front.set_features(kDeviceFeatures);
  // Nothing acks SET_FEATURES here: a request with a reply orders it.
  EXPECT_EQ(front.vring_base(0), 77);
  {
    std::lock_guard lock(good.mutex);
    EXPECT_EQ(good.set_features, kDeviceFeatures);
  }
  EXPECT_THROW(front.queue_num(), std::logic_error);
  EXPECT_EQ(backend.requests(), (std::vector<Request>{Request::kSetOwner, Request::kGetFeatures,
                                                      Request::kSetFeatures, Request::kGetVringBase}));
}

TEST_F(VhostUserSetUp, MemoryTableFdsMapTheGuestsRam) {
  memory.add_ram(0x8000'0000, 2 << 20);
  ASSERT_TRUE(memory.write(0x8000'0000 + 4096, "guest bytes", 12));
  front.start();
  front.set_mem_table(memory);

  std::lock_guard lock(good.mutex);
  ASSERT_EQ(good.kept.size(), 1u);
  const Message& m = good.kept[0];
  ASSERT_EQ(m.fds.size(), 2u);
  ASSERT_EQ(m.payload.size(), 8u + 2 * sizeof(user::MemRegion));
  const auto table = m.as<user::MemTable>();
  EXPECT_EQ(table.nregions, 2u);
  for (unsigned i = 0; i < 2; ++i) {
    const RamRegion& r = *memory.regions()[i];
    EXPECT_EQ(table.regions[i].guest_phys_addr, r.gpa());
    EXPECT_EQ(table.regions[i].memory_size, r.size());
    EXPECT_EQ(table.regions[i].userspace_addr, reinterpret_cast<uint64_t>(r.host()));
    struct stat sent{}, own{};
    ASSERT_EQ(::fstat(m.fds[i].get(), &sent), 0);
    ASSERT_EQ(::fstat(r.memfd(), &own), 0);
    EXPECT_EQ(sent.st_ino, own.st_ino);
  }
  // The backend's own mapping of the second region sees the guest's bytes.
  void* map = ::mmap(nullptr, table.regions[1].memory_size, PROT_READ, MAP_SHARED, m.fds[1].get(),
                     static_cast<off_t>(table.regions[1].mmap_offset));
  ASSERT_NE(map, MAP_FAILED);
  EXPECT_STREQ(static_cast<const char*>(map) + 4096, "guest bytes");
  ::munmap(map, table.regions[1].memory_size);
}

TEST_F(VhostUserSetUp, VringSetUpHandsOverRingAddressesAndTheQueuesFds) {
  front.start();
  UniqueFd kick(::eventfd(0, EFD_CLOEXEC)), call(::eventfd(0, EFD_CLOEXEC));
  Vring v;
  v.index = 1;
  v.size = 256;
  v.next_avail = 5;
  v.desc_gpa = 0x4000'0000;
  v.avail_gpa = 0x4000'1000;
  v.used_gpa = 0x4000'2000;
  v.kick_fd = kick.get();
  v.call_fd = call.get();
  front.setup_vring(memory, v);
  front.set_vring_enable(1, true);
  EXPECT_EQ(front.vring_base(1), 77);

  std::lock_guard lock(good.mutex);
  ASSERT_EQ(good.kept.size(), 6u);  // NUM, BASE, ADDR, KICK, CALL, ERR
  EXPECT_EQ(good.kept[0].as<user::VringState>().num, 256u);
  EXPECT_EQ(good.kept[1].as<user::VringState>().num, 5u);
  const auto addr = good.kept[2].as<user::VringAddr>();
  EXPECT_EQ(addr.index, 1u);
  EXPECT_EQ(addr.desc_user_addr, reinterpret_cast<uint64_t>(memory.span(0x4000'0000, 1)->data()));
  EXPECT_EQ(addr.avail_user_addr, reinterpret_cast<uint64_t>(memory.span(0x4000'1000, 1)->data()));
  EXPECT_EQ(addr.used_user_addr, reinterpret_cast<uint64_t>(memory.span(0x4000'2000, 1)->data()));
  // KICK: the queue's own eventfd arrived (a write on ours reads on theirs).
  ASSERT_EQ(good.kept[3].fds.size(), 1u);
  EXPECT_EQ(good.kept[3].u64(), 1u);
  uint64_t one = 1, got = 0;
  ASSERT_EQ(::write(kick.get(), &one, 8), 8);
  ASSERT_EQ(::read(good.kept[3].fds[0].get(), &got, 8), 8);
  EXPECT_EQ(got, 1u);
  ASSERT_EQ(good.kept[4].fds.size(), 1u);
  // ERR: none given, so "no fd".
  EXPECT_TRUE(good.kept[5].fds.empty());
  EXPECT_EQ(good.kept[5].u64(), 1u | user::kVringNoFd);
}

TEST_F(VhostUserSetUp, RefusesRingsOutsideGuestRamAndRamWithoutAFile) {
  front.start();
  Vring v;
  v.size = 256;
  v.desc_gpa = 0x4000'0000 + (1 << 20) - 16;  // runs past the end of RAM
  v.avail_gpa = 0x4000'1000;
  v.used_gpa = 0x4000'2000;
  EXPECT_THROW(front.setup_vring(memory, v), std::invalid_argument);

  alignas(4096) static uint8_t own[4096];
  GuestMemory embedder;
  embedder.add_ram(RamMapping{0x1000'0000, sizeof(own), own, -1, 0});
  EXPECT_THROW(front.set_mem_table(embedder), std::invalid_argument);
}

TEST_F(VhostUserSetUp, ConfigSpaceReadWithItsRangeChecked) {
  front.start(1ull << user::protocol_feature::kConfig);
  std::array<uint8_t, 6> bytes{};
  front.get_config(10, bytes);
  EXPECT_EQ(bytes, (std::array<uint8_t, 6>{10, 11, 12, 13, 14, 15}));
}

// A hostile backend's answer to the first request that has a reply (or an
// ack), after answering the handshake's GET_FEATURES without protocol
// features where `plain`.
struct Hostile {
  const char* name;
  std::function<void(TestBackend&, const Message&)> misbehave;
  const char* says;  // part of the BackendError's message
  std::chrono::milliseconds timeout = kPatient;
};

class VhostUserHostileBackend : public ::testing::TestWithParam<Hostile> {};

TEST_P(VhostUserHostileBackend, FailsWithinTheBoundAndStaysBroken) {
  const Hostile& h = GetParam();
  TestBackend backend([&](TestBackend& b, Message& m) {
    if (m.request() == Request::kGetFeatures) {
      h.misbehave(b, m);
      return true;
    }
    return true;
  });
  VhostUserFrontend front(backend.take_front(), "hostile", h.timeout);
  const auto started = std::chrono::steady_clock::now();
  try {
    front.start();
    ADD_FAILURE() << "start() returned";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find(h.says), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vhost-user backend hostile"), std::string::npos) << e.what();
  }
  // Bounded: the reply timeout, never the backend's pleasure.
  EXPECT_LT(std::chrono::steady_clock::now() - started, h.timeout + 5s);
  EXPECT_FALSE(front.usable());
  // Out of step: every later call throws at once, nothing is sent.
  const auto sent = backend.requests().size();
  EXPECT_THROW(front.set_vring_enable(0, true), BackendError);
  EXPECT_EQ(backend.requests().size(), sent);
}

void reply_with(TestBackend& b, const Message& m, uint32_t request, uint32_t flags, uint32_t size) {
  user::Header h{request, flags, size};
  b.send_raw(&h, sizeof(h));
  const uint64_t v = kDeviceFeatures;
  b.send_raw(&v, std::min<uint32_t>(size, sizeof(v)));
  (void)m;
}

INSTANTIATE_TEST_SUITE_P(
    Replies, VhostUserHostileBackend,
    ::testing::Values(
        Hostile{"Stalls", [](TestBackend&, const Message&) {}, "nothing within 300 ms while awaiting the reply to GET_FEATURES",
                300ms},
        Hostile{"ClosesMidMessage",
                [](TestBackend& b, const Message&) {
                  const uint32_t half[1] = {static_cast<uint32_t>(Request::kGetFeatures)};
                  b.send_raw(half, sizeof(half));
                  b.close_now();
                },
                "(mid-message)"},
        Hostile{"Closes", [](TestBackend& b, const Message&) { b.close_now(); }, "closed the connection"},
        Hostile{"WrongVersion",
                [](TestBackend& b, const Message& m) { reply_with(b, m, m.header.request, 2 | user::kFlagReply, 8); },
                "version 2"},
        Hostile{"NoReplyFlag",
                [](TestBackend& b, const Message& m) { reply_with(b, m, m.header.request, user::kVersion, 8); },
                "without the reply flag"},
        Hostile{"OtherRequest",
                [](TestBackend& b, const Message& m) {
                  reply_with(b, m, static_cast<uint32_t>(Request::kGetQueueNum), user::kVersion | user::kFlagReply, 8);
                },
                "the reply to request 17"},
        Hostile{"HugePayload",
                [](TestBackend& b, const Message& m) {
                  reply_with(b, m, m.header.request, user::kVersion | user::kFlagReply, 1u << 30);
                },
                "a GET_FEATURES reply of 1073741824 bytes, not 8"}),
    [](const ::testing::TestParamInfo<Hostile>& info) { return std::string(info.param.name); });

TEST(VhostUserFrontend, AStatusOtherThanZeroIsARefusal) {
  GoodBackend good;
  TestBackend backend([&](TestBackend& b, Message& m) {
    if (m.request() == Request::kSetVringEnable) {
      b.reply_u64(m, 1);  // the ack, with an error status
      return true;
    }
    return good.answer()(b, m);
  });
  VhostUserFrontend front(backend.take_front(), "test", kPatient);
  front.start();
  try {
    front.set_vring_enable(0, true);
    ADD_FAILURE() << "set_vring_enable returned";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("refused SET_VRING_ENABLE (status 0x1)"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(front.usable());
}

TEST(VhostUserFrontend, AVringBaseForAnotherVringOrAbove16BitsIsWrong) {
  for (uint32_t wrong_index : {0u, 1u}) {
    TestBackend backend([&](TestBackend& b, Message& m) {
      if (m.request() == Request::kGetFeatures) b.reply_u64(m, kDeviceFeatures);
      if (m.request() == Request::kGetVringBase) {
        user::VringState s{wrong_index ? 3u : 2u, wrong_index ? 5u : 0x10000u};
        b.reply(m, &s, sizeof(s));
      }
      return true;
    });
    VhostUserFrontend front(backend.take_front(), "test", kPatient);
    front.start();
    try {
      front.vring_base(2);
      ADD_FAILURE() << "vring_base returned";
    } catch (const BackendError& e) {
      EXPECT_NE(std::string(e.what()).find(wrong_index ? "for vring 3, not 2" : "not a 16-bit index"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(VhostUserProtocol, ReplyHeaderChecks) {
  const user::Awaited features{Request::kGetFeatures};
  const uint32_t reply = user::kVersion | user::kFlagReply;
  EXPECT_FALSE(user::check_reply_header(features, {1, reply, 8}));
  EXPECT_TRUE(user::check_reply_header(features, {1, reply, 7}));
  EXPECT_TRUE(user::check_reply_header(features, {1, reply | user::kFlagNeedReply, 9}));
  // An ack is a u64 whatever the request.
  const user::Awaited ack{Request::kSetMemTable, true};
  EXPECT_FALSE(user::check_reply_header(ack, {5, reply, 8}));
  // Messages without a reply have none to accept.
  EXPECT_TRUE(user::check_reply_header(user::Awaited{Request::kSetMemTable}, {5, reply, 8}));
  // GET_CONFIG: its header and the bytes asked for, at most 256.
  const user::Awaited config{Request::kGetConfig, false, 0, 4, 16};
  EXPECT_FALSE(user::check_reply_header(config, {24, reply, 12 + 16}));
  EXPECT_FALSE(user::reply_size(user::Awaited{Request::kGetConfig, false, 0, 0, 257}));
}

}  // namespace
}  // namespace kvmmio::vhost
