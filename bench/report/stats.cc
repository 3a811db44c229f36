// SPDX-License-Identifier: BSD-2-Clause
// The report's arithmetic.
#include "bench/report/stats.h"

#include <algorithm>

namespace kvmmio::report {

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  if (values.size() % 2) return values[mid];
  return (values[mid - 1] + values[mid]) / 2;
}

std::optional<double> spread_pct(std::optional<double> min, std::optional<double> max, std::optional<double> median) {
  if (!min || !max) return std::nullopt;
  const std::optional<double> r = ratio(*max - *min, median);
  if (!r) return std::nullopt;
  return *r * 100;
}

std::optional<double> ratio(std::optional<double> num, std::optional<double> den) {
  if (!num || !den || *den == 0) return std::nullopt;
  return *num / *den;
}

std::optional<double> per_unit(uint64_t count, uint64_t amount, long double unit) {
  if (amount == 0) return std::nullopt;
  // Long double keeps counts near 2^64 exact enough before the division.
  return static_cast<double>(static_cast<long double>(count) * unit / static_cast<long double>(amount));
}

}  // namespace kvmmio::report
