// SPDX-License-Identifier: BSD-2-Clause
// Strict parsers for numbers, sizes, KEY=VALUE lists and options (parse.h).
#include "vmm/process/parse.h"

#include <charconv>
#include <map>

#include "kvmmio/base/error.h"

namespace kvmmio {
namespace {

std::string str(std::string_view s) { return std::string(s); }

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

uint64_t parse_uint(std::string_view text, std::string_view shown, uint64_t min, uint64_t max) {
  const std::string range = "give a whole number from " + std::to_string(min) + " to " +
                            std::to_string(max) + " (decimal digits only)";
  if (!all_digits(text)) throw UserError(str(shown) + ": not a whole number; " + range);
  uint64_t n = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && n > max))
    throw UserError(str(shown) + ": too large; " + range);
  if (ec != std::errc() || p != text.data() + text.size())
    throw UserError(str(shown) + ": not a whole number; " + range);
  if (n < min) throw UserError(str(shown) + ": too small; " + range);
  return n;
}

double parse_positive_decimal(std::string_view text, std::string_view shown, double max) {
  const std::string fix = "give a number above 0 and at most " + std::to_string(static_cast<long>(max)) +
                          ", digits with an optional fraction (e.g. 5 or 0.5)";
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  const bool ok = (all_digits(whole) || (whole.empty() && !frac.empty())) &&
                  (dot == std::string_view::npos || all_digits(frac));
  if (!ok) throw UserError(str(shown) + ": not a number; " + fix);
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !(v > 0) || v > max)
    throw UserError(str(shown) + ": out of range; " + fix);
  return v;
}

uint64_t parse_size(std::string_view text, std::string_view shown, unsigned plain_shift) {
  const std::string unit = plain_shift == 20 ? "MiB" : plain_shift == 0 ? "bytes" : "units";
  const std::string fix = "give a whole number (of " + unit +
                          ") with an optional K, M, G or T suffix (binary multiples)";
  unsigned shift = plain_shift;
  bool suffix = true;
  switch (text.empty() ? '\0' : text.back()) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: suffix = false; break;
  }
  const std::string_view digits = suffix ? text.substr(0, text.size() - 1) : text;
  if (!all_digits(digits)) throw UserError(str(shown) + ": not a size; " + fix);
  uint64_t n = 0;
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && shift && n > (UINT64_MAX >> shift)))
    throw UserError(str(shown) + ": too large (more than 2^64 bytes); " + fix);
  if (ec != std::errc() || p != digits.data() + digits.size())
    throw UserError(str(shown) + ": not a size; " + fix);
  return n << shift;
}

std::vector<KeyValue> parse_key_values(std::string_view text, std::string_view shown) {
  std::vector<KeyValue> items;
  if (text.empty()) throw UserError(str(shown) + ": empty; give KEY=VALUE[,KEY=VALUE...]");
  std::string_view rest = text;
  for (;;) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item.empty())
      throw UserError(str(shown) + ": an empty item (a comma " +
                      (comma == std::string_view::npos ? std::string("at the end") : "too many") +
                      "); separate KEY=VALUE items with one comma");
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw UserError(str(shown) + ": '" + str(item) + "' is not KEY=VALUE");
    const std::string_view key = item.substr(0, eq);
    if (key.empty()) throw UserError(str(shown) + ": '" + str(item) + "' has no key before '='");
    for (const KeyValue& kv : items)
      if (kv.first == key)
        throw UserError(str(shown) + ": " + str(key) + "= is given twice; give each key once");
    items.emplace_back(key, item.substr(eq + 1));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return items;
}

std::vector<std::string> parse_cli(const std::vector<CliOption>& options,
                                   const std::vector<std::string>& args, size_t max_positional) {
  std::vector<std::string> positional;
  std::map<std::string, bool> seen;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg.rfind("--", 0) != 0 || arg == "-") {
      if (!options_done && arg.size() > 1 && arg[0] == '-' && arg != "-")
        throw UserError("unknown option '" + arg + "' (options start with --; see --help)");
      if (positional.size() >= max_positional)
        throw UserError("unexpected argument '" + arg + "' (see --help)");
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const CliOption* opt = nullptr;
    for (const CliOption& o : options)
      if (o.name == name) opt = &o;
    if (!opt) throw UserError("unknown option '" + name + "' (see --help)");
    if (seen[name] && !opt->repeatable) throw UserError(name + " is given twice; give it once");
    seen[name] = true;
    std::string value;
    if (opt->value.empty()) {
      if (eq != std::string::npos) throw UserError(name + " takes no value (given '" + arg + "')");
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      value = args[++i];
    } else {
      throw UserError(name + " needs a value: " + opt->value +
                      (i + 1 < args.size() ? " (a value that starts with -- is given as " + name +
                                                 "=VALUE)"
                                           : ""));
    }
    opt->set(value);
  }
  return positional;
}

}  // namespace kvmmio
