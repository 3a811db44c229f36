// SPDX-License-Identifier: BSD-2-Clause
// The report as JSON (schema_version kJsonSchemaVersion, documented in
// docs/benchmarks.md, which says when it changes).
#pragma once

#include <string>

#include "bench/report/report.h"

namespace kvmmio::report {

inline constexpr int kJsonSchemaVersion = 2;

std::string render_json(const Report& report, const std::string& title);

}  // namespace kvmmio::report
