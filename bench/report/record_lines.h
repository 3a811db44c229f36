// SPDX-License-Identifier: BSD-2-Clause
// The one walk over a raw.jsonl file's lines, for both of its readers (the
// report's, read_runs.cc, and the check's, check_records.cc).
#pragma once

#include <string_view>

namespace kvmmio::report {

// Calls fn(line, number) for each non-blank line of `text`, numbered from 1
// as the file counts them.
template <class Fn>
void for_each_record_line(std::string_view text, Fn fn) {
  int number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) fn(line, number);
  }
}

}  // namespace kvmmio::report
