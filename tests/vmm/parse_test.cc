// SPDX-License-Identifier: BSD-2-Clause
// The strict parsers every kvmmio program shares (vmm/process/parse.h):
// what they accept, and that every refusal names what the user typed.
#include "vmm/process/parse.h"

#include <gtest/gtest.h>

#include "kvmmio/base/error.h"

namespace kvmmio {
namespace {

// The message of the UserError `fn` throws, or "accepted".
template <typename Fn>
std::string refusal(Fn fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ParseUint, AcceptsDigitsInRange) {
  EXPECT_EQ(parse_uint("0", "--n 0", 0, 10), 0u);
  EXPECT_EQ(parse_uint("10", "--n 10", 0, 10), 10u);
  EXPECT_EQ(parse_uint("007", "--n 007", 0, 10), 7u);
  EXPECT_EQ(parse_uint("18446744073709551615", "--n", 0, UINT64_MAX), UINT64_MAX);
}

TEST(ParseUint, RefusesSignsSpacesAndOtherText) {
  for (const char* bad : {"", "+1", "-1", " 1", "1 ", "0x10", "1e3", "1.0", "one", "1,"}) {
    const std::string shown = std::string("--cpus ") + bad;
    const std::string msg = refusal([&] { parse_uint(bad, shown, 1, 100); });
    EXPECT_EQ(msg.rfind(shown + ": not a whole number", 0), 0u) << "'" << bad << "': " << msg;
    EXPECT_NE(msg.find("from 1 to 100"), std::string::npos) << msg;
  }
}

TEST(ParseUint, RefusesOutOfRangeWithoutWrapping) {
  EXPECT_NE(refusal([] { parse_uint("0", "--cpus 0", 1, 8); }).find("too small"), std::string::npos);
  EXPECT_NE(refusal([] { parse_uint("9", "--cpus 9", 1, 8); }).find("too large"), std::string::npos);
  EXPECT_NE(refusal([] { parse_uint("18446744073709551616", "--n", 0, UINT64_MAX); }).find("too large"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_uint("4294967297", "--n", 0, UINT32_MAX); }).find("too large"),
            std::string::npos);
}

TEST(ParsePositiveDecimal, AcceptsDigitsWithAFraction) {
  EXPECT_DOUBLE_EQ(parse_positive_decimal("5", "--seconds 5", 60), 5.0);
  EXPECT_DOUBLE_EQ(parse_positive_decimal("0.25", "--seconds", 60), 0.25);
  EXPECT_DOUBLE_EQ(parse_positive_decimal(".5", "--seconds", 60), 0.5);
  for (const char* bad : {"", "0", "0.0", "-1", "+1", "1e3", "inf", "nan", "1.", "1..2", " 1", "61"})
    EXPECT_EQ(refusal([&] { parse_positive_decimal(bad, "--seconds x", 60); }).rfind("--seconds x: ", 0), 0u)
        << "'" << bad << "'";
}

TEST(ParseSize, PlainNumbersCountTheGivenUnit) {
  EXPECT_EQ(parse_size("512", "--mem 512", 20), uint64_t{512} << 20);
  EXPECT_EQ(parse_size("4096", "--size 4096", 0), 4096u);
  EXPECT_EQ(parse_size("64k", "--mem", 20), 64u << 10);
  EXPECT_EQ(parse_size("64K", "--mem", 20), 64u << 10);
  EXPECT_EQ(parse_size("512M", "--mem", 20), uint64_t{512} << 20);
  EXPECT_EQ(parse_size("2g", "--mem", 20), uint64_t{2} << 30);
  EXPECT_EQ(parse_size("1T", "--mem", 20), uint64_t{1} << 40);
}

TEST(ParseSize, RefusesOverflowAndOtherText) {
  for (const char* bad : {"", "M", "12X", "-1", "+1", "1.5G", "0x100", " 1M", "1M ", "1MB", "1 M"}) {
    const std::string msg = refusal([&] { parse_size(bad, "--mem x", 20); });
    EXPECT_EQ(msg.rfind("--mem x: not a size", 0), 0u) << "'" << bad << "': " << msg;
    EXPECT_NE(msg.find("K, M, G or T"), std::string::npos) << msg;
  }
  // 2^64 - 1 MiB, and more than 2^64 bytes through a suffix: refused, not wrapped.
  for (const char* big : {"18446744073709551615", "99999999999999999999", "17179869184G",
                          "17592186044416"})
    EXPECT_NE(refusal([&] { parse_size(big, "--mem x", 20); }).find("too large"), std::string::npos) << big;
  EXPECT_EQ(parse_size("17592186044415", "--mem", 20), uint64_t{17592186044415} << 20);
}

TEST(ParseKeyValues, SplitsItemsInOrder) {
  const auto kv = parse_key_values("tap=a,vhost=on,cmdline=", "--net x");
  ASSERT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv[0], KeyValue("tap", "a"));
  EXPECT_EQ(kv[1], KeyValue("vhost", "on"));
  EXPECT_EQ(kv[2], KeyValue("cmdline", ""));
  EXPECT_EQ(parse_key_values("a=b=c", "x")[0], KeyValue("a", "b=c"));
}

TEST(ParseKeyValues, RefusesDuplicatesEmptyItemsAndBareWords) {
  EXPECT_NE(refusal([] { parse_key_values("tap=a,tap=b", "--net tap=a,tap=b"); })
                .find("--net tap=a,tap=b: tap= is given twice"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_key_values("vhost=on,vhost=off", "--net s"); }).find("vhost= is given twice"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_key_values("tap=a,", "--net s"); }).find("a comma at the end"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_key_values(",tap=a", "--net s"); }).find("empty item"), std::string::npos);
  EXPECT_NE(refusal([] { parse_key_values("tap=a,,mtu=1500", "--net s"); }).find("empty item"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_key_values("", "--net s"); }).find("empty"), std::string::npos);
  EXPECT_NE(refusal([] { parse_key_values("tap", "--net s"); }).find("'tap' is not KEY=VALUE"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_key_values("=a", "--net s"); }).find("no key"), std::string::npos);
}

struct Cli {
  std::string a, b;
  std::vector<std::string> many;
  bool flag = false;
  std::vector<CliOption> options() {
    return {{"--a", "a thing", [this](const std::string& v) { a = v; }},
            {"--b", "another", [this](const std::string& v) { b = v; }},
            {"--many", "one of many", [this](const std::string& v) { many.push_back(v); }, true},
            {"--flag", "", [this](const std::string&) { flag = true; }}};
  }
};

TEST(ParseCli, TakesBothFormsFlagsAndRepeats) {
  Cli c;
  const auto rest = parse_cli(c.options(),
                              {"--a", "x", "--b=--y", "--many", "1", "--many=2", "--flag", "pos", "-"}, 2);
  EXPECT_EQ(c.a, "x");
  EXPECT_EQ(c.b, "--y");
  EXPECT_EQ(c.many, (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(c.flag);
  EXPECT_EQ(rest, (std::vector<std::string>{"pos", "-"}));
  Cli d;
  EXPECT_EQ(parse_cli(d.options(), {"--", "--a"}, 1), std::vector<std::string>{"--a"});
  EXPECT_EQ(d.a, "");
}

TEST(ParseCli, AnOptionIsNotAValue) {
  // kvmmio run --kernel --mem 1G: --kernel has no value, whatever follows.
  Cli c;
  const std::string msg = refusal([&] { parse_cli(c.options(), {"--a", "--b", "1G"}, 0); });
  EXPECT_EQ(msg.rfind("--a needs a value: a thing", 0), 0u) << msg;
  EXPECT_NE(msg.find("--a=VALUE"), std::string::npos) << msg;
  EXPECT_EQ(refusal([&] { parse_cli(c.options(), {"--a"}, 0); }), "--a needs a value: a thing");
}

TEST(ParseCli, RefusesUnknownTwiceFlagValuesAndStrayArguments) {
  Cli c;
  EXPECT_NE(refusal([&] { parse_cli(c.options(), {"--c", "1"}, 0); }).find("unknown option '--c'"),
            std::string::npos);
  EXPECT_NE(refusal([&] { parse_cli(c.options(), {"-a", "1"}, 5); }).find("unknown option '-a'"),
            std::string::npos);
  EXPECT_NE(refusal([&] { parse_cli(c.options(), {"--a", "1", "--a=2"}, 0); }).find("--a is given twice"),
            std::string::npos);
  EXPECT_NE(refusal([&] { parse_cli(c.options(), {"--flag=yes"}, 0); }).find("--flag takes no value"),
            std::string::npos);
  EXPECT_NE(refusal([&] { parse_cli(c.options(), {"x", "y"}, 1); }).find("unexpected argument 'y'"),
            std::string::npos);
}

}  // namespace
}  // namespace kvmmio
