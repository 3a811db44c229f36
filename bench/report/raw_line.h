// SPDX-License-Identifier: BSD-2-Clause
// One line of a raw file split into its kind (the first word) and its
// key=value fields, with typed accessors whose errors name the line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/report/records.h"

namespace kvmmio::report {

class RawLine {
 public:
  // Throws InputError for a word without '=', an empty key or value, or a
  // key given twice.
  RawLine(std::string_view text, Source source);

  const std::string& kind() const { return kind_; }
  const Source& source() const { return source_; }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

  bool has(std::string_view key) const;
  // Required fields: throw InputError when missing or not of the type.
  std::string text(std::string_view key);
  uint64_t count(std::string_view key);      // non-negative integer
  unsigned count32(std::string_view key);    // same, fits 32 bits
  double number(std::string_view key);       // finite, non-negative
  std::optional<std::string> optional_text(std::string_view key);

  // Throws for any field no accessor asked for: a misspelt counter name
  // must not silently turn into "absent".
  void reject_unused() const;

 private:
  const std::string& required(std::string_view key);
  [[noreturn]] void fail(const std::string& what) const;

  Source source_;
  std::string kind_;
  std::vector<std::pair<std::string, std::string>> fields_;
  std::vector<bool> used_;
};

}  // namespace kvmmio::report
