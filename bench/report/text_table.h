// SPDX-License-Identifier: BSD-2-Clause
// A plain-text table: columns as wide as their widest cell, two spaces
// apart, each aligned left or right; blank lines between groups of rows.
#pragma once

#include <string>
#include <vector>

namespace kvmmio::report {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  explicit TextTable(std::vector<Align> columns) : align_(std::move(columns)) {}

  // Header lines come first, whatever the call order, and a dashed rule
  // follows them. Rows shorter than the column count are padded.
  void header(std::vector<std::string> cells) { header_.push_back(std::move(cells)); }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void gap() { rows_.emplace_back(); }  // a blank line

  std::string render() const;

 private:
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace kvmmio::report
