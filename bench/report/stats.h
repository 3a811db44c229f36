// SPDX-License-Identifier: BSD-2-Clause
// The arithmetic of the report, kept apart so the tests can pin it down.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace kvmmio::report {

// The middle value, or the mean of the two middle values for an even
// count. Unset for no values.
std::optional<double> median(std::vector<double> values);

// (max - min) / median in percent; unset without a median or for a zero one.
std::optional<double> spread_pct(std::optional<double> min, std::optional<double> max, std::optional<double> median);

// num / den; unset if either is unset or den is zero.
std::optional<double> ratio(std::optional<double> num, std::optional<double> den);

// count per `unit` of `amount` (1e9: per GB of bytes); unset for a zero amount.
std::optional<double> per_unit(uint64_t count, uint64_t amount, long double unit);

}  // namespace kvmmio::report
