// SPDX-License-Identifier: BSD-2-Clause
// Reading a run's raw.jsonl for its verdict (check.h): every record as it
// stands, into the report's Run (records.h), without the report's
// judgement of it. The report's reader (read_runs.h) refuses a file it
// cannot render, and that is the verdict's business to explain, not to
// stop at: the record of a config whose guest never booted, written once
// per boot (so once per round with --order rounds), a run's
// "other_vm_exits" (outside), a micro record whose file is gone. Here a
// record needs only to be a JSON object whose members the verdict reads
// have the types the driver writes; the rest is left alone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bench/report/records.h"

namespace kvmmio::report {

// The outside member net-compare.sh adds when other VMs exited during the
// run (other_vms_check): their exits. Kept in Run::outside with the others.
inline constexpr const char* kOtherVmExits = "other_vm_exits";

struct CheckRecords {
  // Every record but meta and micro, in the file's order, with what the
  // verdict reads: kind, config (required), failed, rep (0: none), the
  // parameters, the kind's values (kinds.h; none for an unknown kind),
  // counters and outside (a member that is null is left out of counters,
  // and kept as null in outside).
  std::vector<Run> runs;
  bool micro = false;  // a record of kind micro is there
};

// Reads `text`, named `name` in errors. Blank lines are skipped. Throws
// InputError ("NAME:LINE: what is wrong") for a line that is not a JSON
// object, a kind that is not a string, a run without a config, or a member
// the verdict reads with another type than the driver writes (a parameter
// that is not a whole number or a string, a value, counter or outside
// counter that is not a number or null).
CheckRecords parse_check_records(std::string_view text, const std::string& name);

}  // namespace kvmmio::report
