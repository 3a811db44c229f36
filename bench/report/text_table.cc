// SPDX-License-Identifier: BSD-2-Clause
// TextTable.
#include "bench/report/text_table.h"

#include <algorithm>

namespace kvmmio::report {

std::string TextTable::render() const {
  std::vector<size_t> width(align_.size(), 0);
  for (const auto* rows : {&header_, &rows_})
    for (const auto& r : *rows)
      for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());

  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const std::string pad(width[i] - cell.size(), ' ');
      if (i) out += "  ";
      out += align_[i] == Align::kLeft ? cell + pad : pad + cell;
    }
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };

  std::string out;
  for (const auto& h : header_) out += line(h);
  size_t total = 0;
  for (size_t w : width) total += w;
  if (!header_.empty() && !width.empty()) out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& r : rows_) out += r.empty() ? "\n" : line(r);
  return out;
}

}  // namespace kvmmio::report
