// SPDX-License-Identifier: BSD-2-Clause
// The control socket end to end, over a real unix socket, against a fake
// machine (FakeVmControl): the request parser's answers, the socket's
// mode and stale-file rules (more in unix_socket_test.cc), the client and
// line bounds, requests split over several writes or sent many at once,
// and `kvmmio ctl`.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../virtio/harness.h"
#include "fake_vm_control.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "test_files.h"
#include "vmm/control/control_client.h"
#include "vmm/control/control_server.h"
#include "vmm/cli/options.h"
#include "vmm/process/unix_socket.h"

namespace kvmmio::vmm {
namespace {

using virtio::test::eventually;
using Json = nlohmann::json;

// --- The parser alone -------------------------------------------------------

Json answer_of(std::string_view line, test::FakeVmControl& vm, bool* error = nullptr) {
  const ControlReply r = handle_control_request(line, vm);
  if (error) *error = r.error;
  EXPECT_EQ(r.line.find('\n'), std::string::npos) << "one line: " << r.line;
  return Json::parse(r.line);
}

TEST(ControlProtocol, EachCommandReachesTheMachineAndIsAnswered) {
  test::FakeVmControl vm;
  bool error = true;
  Json a = answer_of(R"({"cmd":"stats"})", vm, &error);
  EXPECT_FALSE(error);
  EXPECT_EQ(a["cpus"], 2);
  EXPECT_EQ(a["paused"], false);
  a = answer_of(R"({"cmd":"pause"})", vm, &error);
  EXPECT_FALSE(error);
  EXPECT_EQ(a["result"], "paused");
  EXPECT_EQ(a["already"], false);
  EXPECT_EQ(a["parked_vcpus"], 2);
  EXPECT_EQ(answer_of(R"({"cmd":"pause"})", vm)["already"], true) << "pause is idempotent";
  EXPECT_EQ(answer_of(R"({"cmd":"stats"})", vm)["paused"], true);
  a = answer_of(R"({"cmd":"resume"})", vm);
  EXPECT_EQ(a["result"], "resumed");
  EXPECT_EQ(a["was_paused"], true);
  EXPECT_FALSE(vm.paused());
  EXPECT_EQ(answer_of(R"({"cmd":"shutdown"})", vm)["result"], "shutdown requested");
  EXPECT_EQ(vm.power_key_presses, 1);
  EXPECT_EQ(answer_of(R"( { "cmd" : "quit" } )", vm)["result"], "quitting");
  EXPECT_EQ(vm.quits, 1);
}

TEST(ControlProtocol, MalformedRequestsGetAnErrorAndTouchNothing) {
  test::FakeVmControl vm;
  const char* bad[] = {
      "",  "stats", "{", "[]", "42", "null", R"("stats")", R"({})", R"({"cmd":1})",
      R"({"cmd":null})", R"({"cmd":["stats"]})", R"({"cmd":"reboot"})", R"({"cmd":"stats","x":1})",
      R"({"cmd":"STATS"})", "{\"cmd\":\"st\xff\xfe\"}", R"({"cmd":"stats"} trailing)",
      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
  };
  for (const char* line : bad) {
    SCOPED_TRACE(line);
    bool error = false;
    const Json a = answer_of(line, vm, &error);
    EXPECT_TRUE(error);
    ASSERT_TRUE(a.contains("error"));
    EXPECT_FALSE(a["error"].get<std::string>().empty());
  }
  EXPECT_EQ(vm.pauses + vm.resumes + vm.power_key_presses + vm.quits, 0);
}

// --- The server over a real socket ---------------------------------------------

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("api.sock");
    server_ = std::make_unique<ControlServer>(path_);
    server_->start(loop_, vm_);
  }
  void TearDown() override { server_->stop(); }

  UniqueFd connect() {
    UniqueFd fd = connect_unix_socket(path_);
    EXPECT_TRUE(fd) << std::strerror(errno);
    return fd;
  }
  static void send_all(int fd, const std::string& s) {
    ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  // The next line from `fd`, or "" when it closed or nothing came in time.
  static std::string line_from(int fd) {
    std::string got;
    eventually([&] {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10) != 1) return false;
      char c;
      while (::recv(fd, &c, 1, MSG_DONTWAIT) == 1) {
        if (c == '\n') return true;
        got += c;
      }
      return p.revents & POLLHUP ? true : false;
    });
    return got;
  }
  static bool closed(int fd) {
    return eventually([&] {
      char c;
      return ::recv(fd, &c, 1, MSG_DONTWAIT) == 0;
    });
  }

  test::TempDir dir_;
  std::string path_;
  test::FakeVmControl vm_;
  EventLoop loop_{"control"};
  std::unique_ptr<ControlServer> server_;
};

TEST_F(ControlServerTest, TheSocketIsMode0600AndAnswersEachLine) {
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  UniqueFd c = connect();
  send_all(c.get(), "{\"cmd\":\"pause\"}\n{\"cmd\":\"stats\"}\r\n");
  EXPECT_EQ(Json::parse(line_from(c.get()))["result"], "paused");
  EXPECT_EQ(Json::parse(line_from(c.get()))["paused"], true);
  // A request in pieces is one request.
  send_all(c.get(), "{\"cmd\":");
  loop_.flush();
  send_all(c.get(), "\"resume\"}\n");
  EXPECT_EQ(Json::parse(line_from(c.get()))["result"], "resumed");
  send_all(c.get(), "not json\n");
  EXPECT_TRUE(Json::parse(line_from(c.get())).contains("error"));
  EXPECT_EQ(server_->counters().requests, 4u);
  EXPECT_EQ(server_->counters().errors, 1u);
  EXPECT_EQ(server_->counters().clients, 1u);
}

TEST_F(ControlServerTest, ManyRequestsAtOnceAreEachAnswered) {
  UniqueFd c = connect();
  std::string burst;
  for (int i = 0; i < 300; ++i) burst += "{\"cmd\":\"pause\"}\n";
  send_all(c.get(), burst);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(Json::parse(line_from(c.get()))["result"], "paused") << i;
  EXPECT_EQ(vm_.pauses, 300);
}

TEST_F(ControlServerTest, ALineTooLongIsRefusedAndTheClientClosed) {
  UniqueFd c = connect();
  send_all(c.get(), std::string(ControlServer::kMaxLine + 1, ' '));
  const std::string a = line_from(c.get());
  ASSERT_FALSE(a.empty());
  EXPECT_NE(Json::parse(a)["error"].get<std::string>().find("longer than 4096"), std::string::npos);
  EXPECT_TRUE(closed(c.get()));
  EXPECT_EQ(server_->counters().dropped_clients, 1u);
  // Exactly the limit is a request (and a malformed one here).
  UniqueFd d = connect();
  send_all(d.get(), std::string(ControlServer::kMaxLine, ' ') + "\n");
  EXPECT_NE(Json::parse(line_from(d.get()))["error"].get<std::string>().find("not JSON"), std::string::npos);
}

TEST_F(ControlServerTest, TheNinthClientIsToldAndClosedAndAFreedPlaceIsTaken) {
  std::vector<UniqueFd> clients;
  for (size_t i = 0; i < ControlServer::kMaxClients; ++i) clients.push_back(connect());
  // Each one served, so all are accepted before the next connects.
  for (auto& c : clients) {
    send_all(c.get(), "{\"cmd\":\"resume\"}\n");
    ASSERT_FALSE(line_from(c.get()).empty());
  }
  UniqueFd ninth = connect();
  EXPECT_NE(line_from(ninth.get()).find("too many clients"), std::string::npos);
  EXPECT_TRUE(closed(ninth.get()));
  EXPECT_EQ(server_->counters().refused_clients, 1u);
  clients.pop_back();  // one leaves
  ASSERT_TRUE(eventually([&] {
    UniqueFd next = connect();
    send_all(next.get(), "{\"cmd\":\"resume\"}\n");
    const std::string a = line_from(next.get());
    return a.find("resumed") != std::string::npos;
  }));
}

TEST_F(ControlServerTest, AStaleSocketIsReplacedAndALiveOneOrAFileRefused) {
  // Live: this fixture's server listens on path_.
  try {
    ControlServer second(path_);
    ADD_FAILURE() << "a second server took a live socket";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  const std::string file = dir_.file("plain");
  test::write_file(file, {'x'});
  try {
    ControlServer on_file(file);
    ADD_FAILURE() << "a regular file was replaced";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not a socket; choose another path"), std::string::npos) << e.what();
  }
  // Stale: bound, then its listener gone without removing the file.
  const std::string stale = dir_.file("stale.sock");
  {
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM, 0));
    const sockaddr_un addr = unix_socket_address(stale);
    ASSERT_EQ(::bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  }
  ControlServer replaced(stale);
  replaced.publish();
  EXPECT_TRUE(connect_unix_socket(stale));
}

// --- kvmmio ctl ---------------------------------------------------------------

int ctl(const std::string& path, const std::string& command, std::string* printed) {
  std::FILE* out = std::tmpfile();
  const int status = run_ctl(CtlOptions{path, command, {}}, out, 5000);
  std::rewind(out);
  char buf[65536];
  const size_t n = std::fread(buf, 1, sizeof buf, out);
  std::fclose(out);
  printed->assign(buf, n);
  return status;
}

TEST_F(ControlServerTest, CtlPrintsTheAnswerAndExitsByIt) {
  std::string printed;
  EXPECT_EQ(ctl(path_, "pause", &printed), 0);
  EXPECT_EQ(Json::parse(printed)["result"], "paused");
  EXPECT_EQ(ctl(path_, "stats", &printed), 0);
  EXPECT_EQ(Json::parse(printed)["paused"], true);
  EXPECT_EQ(ctl(path_, "shutdown", &printed), 0);
  EXPECT_EQ(vm_.power_key_presses, 1);
  EXPECT_EQ(ctl(path_, "reboot", &printed), 1) << "an error answer";
  EXPECT_TRUE(Json::parse(printed).contains("error"));
  EXPECT_EQ(ctl(path_, "quit", &printed), 0);
  EXPECT_EQ(vm_.quits, 1);
}

TEST(ControlClient, AMissingSocketIsAUsageErrorNamingTheFix) {
  test::TempDir dir;
  try {
    run_ctl(CtlOptions{dir.file("none.sock"), "stats", {}}, stdout, 1000);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("is kvmmio running with --api-socket"), std::string::npos) << e.what();
  }
}

TEST(ControlClient, CtlTakesASocketAndOneCommand) {
  const Command c = parse_command_line({"ctl", "/run/vm0.sock", "stats"});
  EXPECT_EQ(c.kind, Command::Kind::kCtl);
  EXPECT_EQ(c.ctl.socket, "/run/vm0.sock");
  EXPECT_EQ(c.ctl.command, "stats");
  EXPECT_THROW(parse_command_line({"ctl", "/run/vm0.sock"}), UsageError);
  EXPECT_THROW(parse_command_line({"ctl", "/run/vm0.sock", "stats", "more"}), UsageError);
  EXPECT_THROW(parse_command_line({"ctl", std::string(200, 'x'), "stats"}), UsageError);
}

TEST(ControlOptions, ApiSocketIsAPathOfItsOwn) {
  const Command c = parse_command_line({"run", "--kernel", "Image", "--api-socket", "/run/vm0.sock"});
  EXPECT_EQ(c.run.api_socket, "/run/vm0.sock");
  EXPECT_THROW(parse_command_line({"run", "--kernel", "Image", "--api-socket", std::string(200, 'x')}),
               UsageError);
  try {
    parse_command_line({"run", "--kernel", "Image", "--api-socket", "/tmp/a.sock", "--console", "serial,socket=/tmp/a.sock"});
    ADD_FAILURE() << "one path for two sockets";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("give each its own"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvmmio::vmm
