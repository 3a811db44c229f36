// SPDX-License-Identifier: BSD-2-Clause
// Reading the main job's raw measurement files: one record a line, `#` lines
// and blank lines ignored, the first word the kind, then key=value fields.
//
//   meta KEY=VALUE...
//   iperf config=C mtu=M dir=g2h|h2g streams=S rep=R bytes=B seconds=T bps=X
//         [vcpu_exits=N wakeups=N injected=N relayed=N trapped=N polled=N guest_irqs=N]
//   rr config=C mtu=M rep=R transactions=N seconds=T tps=X p50_us=X p90_us=X p99_us=X
//   micro platform=NAME file=PATH
//
// An iperf or rr record with failed=REASON instead of its measurements is a
// run that did not complete. The report it feeds is documented in
// docs/benchmarks.md.
#pragma once

#include <string>
#include <string_view>

#include "bench/report/records.h"

namespace kvmmio::report {

// Appends the records in `text` to `into`. `name` names the file in errors;
// a relative micro file= path is taken from `base_dir`. Throws InputError
// ("NAME:LINE: what is wrong") for a malformed record, a run given twice
// (across files too), a meta key that contradicts an earlier one, or a micro
// file that cannot be read or is not a kvm_notify_bench result.
void parse_raw(std::string_view text, const std::string& name, const std::string& base_dir, RawData& into);

// Reads the file at `path` and parses it, relative micro paths being taken
// from the file's directory. Throws InputError if it cannot be read.
void read_raw_file(const std::string& path, RawData& into);

}  // namespace kvmmio::report
