// SPDX-License-Identifier: BSD-2-Clause
// The report as text: the throughput table grouped by MTU, direction and
// streams, the latency table, the microbenchmark table and the failed runs.
// Lines stay under 130 columns.
#pragma once

#include <string>

#include "bench/report/report.h"

namespace kvmmio::report {

std::string render_text(const Report& report, const std::string& title);

}  // namespace kvmmio::report
