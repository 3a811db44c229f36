// SPDX-License-Identifier: BSD-2-Clause
// The log sink API (kvmmio/base/log.h): an embedder's sink gets every
// message at or above the level, guest errors included, and the default
// comes back when the sink is removed.
#include "kvmmio/base/log.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kvmmio/base/error.h"

namespace kvmmio {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_log_sink([this](LogLevel level, std::string_view message) {
      got_.emplace_back(level, std::string(message));
    });
  }
  void TearDown() override {
    set_log_sink({});
    set_log_level(LogLevel::kInfo);
  }
  std::vector<std::pair<LogLevel, std::string>> got_;
};

TEST_F(LogTest, TheSinkGetsLevelAndMessage) {
  KVMMIO_LOG_WARN("tap %s is down", "kvmtap0");
  KVMMIO_LOG_INFO("plain");
  ASSERT_EQ(got_.size(), 2u);
  EXPECT_EQ(got_[0], std::make_pair(LogLevel::kWarn, std::string("tap kvmtap0 is down")));
  EXPECT_EQ(got_[1], std::make_pair(LogLevel::kInfo, std::string("plain")));
}

TEST_F(LogTest, MessagesBelowTheLevelAreDropped) {
  set_log_level(LogLevel::kWarn);
  EXPECT_EQ(log_level(), LogLevel::kWarn);
  KVMMIO_LOG_DEBUG("no");
  KVMMIO_LOG_INFO("no");
  KVMMIO_LOG_ERROR("yes");
  ASSERT_EQ(got_.size(), 1u);
  EXPECT_EQ(got_[0].second, "yes");
  set_log_level(LogLevel::kDebug);
  KVMMIO_LOG_DEBUG("now");
  EXPECT_EQ(got_.back(), std::make_pair(LogLevel::kDebug, std::string("now")));
}

TEST_F(LogTest, GuestErrorsGoToTheSinkRateLimitedAndAlwaysCounted) {
  GuestErrorLog errors("virtio0");
  for (int i = 0; i < 20; ++i) errors.report("bad write %d", i);
  EXPECT_EQ(errors.count(), 20u);
  ASSERT_EQ(got_.size(), GuestErrorLog::kBurst);
  EXPECT_EQ(got_[0], std::make_pair(LogLevel::kWarn, std::string("guest error (virtio0, #1): bad write 0")));
  set_log_level(LogLevel::kError);
  errors.report("hidden");
  EXPECT_EQ(errors.count(), 21u);
  EXPECT_EQ(got_.size(), GuestErrorLog::kBurst);
}

TEST_F(LogTest, LongMessagesAreCutNotOverrun) {
  const std::string big(5000, 'x');
  KVMMIO_LOG_INFO("%s", big.c_str());
  ASSERT_EQ(got_.size(), 1u);
  EXPECT_GT(got_[0].second.size(), 1000u);
  EXPECT_LT(got_[0].second.size(), 1024u);
}

TEST(LogLevels, ParseAndFormat) {
  EXPECT_EQ(parse_log_level("debug", "--log-level debug"), LogLevel::kDebug);
  EXPECT_EQ(parse_log_level("warn", "x"), LogLevel::kWarn);
  EXPECT_STREQ(to_string(LogLevel::kError), "error");
  try {
    parse_log_level("verbose", "--log-level verbose");
    ADD_FAILURE() << "accepted verbose";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "--log-level verbose: choose debug, info, warn or error");
  }
  EXPECT_EQ(format_log_line(LogLevel::kWarn, "m"), "kvmmio: warning: m\n");
  EXPECT_EQ(format_log_line(LogLevel::kInfo, "m"), "kvmmio: m\n");
}

}  // namespace
}  // namespace kvmmio
