// SPDX-License-Identifier: BSD-2-Clause
// docs/usage.md's counter tables, written from the counter tables in the
// code (vmm/stats/device_stats.h), so the documentation cannot drift from what
// --stats writes: `make counter-docs` rewrites them, and vmm_tests fails
// while they differ.
#pragma once

#include <string>

namespace kvmmio::vmm {

// The markdown tables: device counters by device type, then vCPU exits.
std::string counter_tables_markdown();

// `doc` with the text between the lines holding kCountersBegin and
// kCountersEnd replaced by counter_tables_markdown(). Throws
// std::runtime_error when the markers are missing.
inline constexpr const char* kCountersBegin = "<!-- counters: begin";
inline constexpr const char* kCountersEnd = "<!-- counters: end";
std::string with_counter_tables(const std::string& doc);

}  // namespace kvmmio::vmm
