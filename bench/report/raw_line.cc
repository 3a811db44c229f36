// SPDX-License-Identifier: BSD-2-Clause
// RawLine: tokenizing and typed field access for the raw record format.
#include "bench/report/raw_line.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "bench/report/input_error.h"

namespace kvmmio::report {
namespace {

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace

RawLine::RawLine(std::string_view text, Source source) : source_(std::move(source)) {
  const std::vector<std::string_view> w = words(text);
  if (w.empty()) fail("empty record");
  kind_ = std::string(w[0]);
  for (size_t i = 1; i < w.size(); ++i) {
    const size_t eq = w[i].find('=');
    if (eq == std::string_view::npos) fail("expected key=value, got '" + std::string(w[i]) + "'");
    std::string key(w[i].substr(0, eq));
    std::string value(w[i].substr(eq + 1));
    if (key.empty()) fail("empty key in '" + std::string(w[i]) + "'");
    if (value.empty()) fail("empty value for " + key);
    if (has(key)) fail(key + " given twice");
    fields_.emplace_back(std::move(key), std::move(value));
  }
  used_.assign(fields_.size(), false);
}

bool RawLine::has(std::string_view key) const {
  for (const auto& [k, v] : fields_)
    if (k == key) return true;
  return false;
}

const std::string& RawLine::required(std::string_view key) {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].first == key) {
      used_[i] = true;
      return fields_[i].second;
    }
  }
  fail(kind_ + " record without " + std::string(key) + "=");
}

std::string RawLine::text(std::string_view key) { return required(key); }

std::optional<std::string> RawLine::optional_text(std::string_view key) {
  if (!has(key)) return std::nullopt;
  return required(key);
}

uint64_t RawLine::count(std::string_view key) {
  const std::string& v = required(key);
  uint64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size())
    fail(std::string(key) + "=" + v + " is not a non-negative integer");
  return out;
}

unsigned RawLine::count32(std::string_view key) {
  const uint64_t v = count(key);
  if (v > std::numeric_limits<unsigned>::max()) fail(std::string(key) + "=" + std::to_string(v) + " is too large");
  return static_cast<unsigned>(v);
}

double RawLine::number(std::string_view key) {
  const std::string& v = required(key);
  double out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  // from_chars accepts "inf" and "nan"; neither is a measurement.
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(out) || out < 0)
    fail(std::string(key) + "=" + v + " is not a non-negative number");
  return out;
}

void RawLine::reject_unused() const {
  for (size_t i = 0; i < fields_.size(); ++i)
    if (!used_[i]) fail("unknown key " + fields_[i].first + "= in this " + kind_ + " record");
}

void RawLine::fail(const std::string& what) const { throw InputError(source_, what); }

}  // namespace kvmmio::report
