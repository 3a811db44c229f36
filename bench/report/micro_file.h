// SPDX-License-Identifier: BSD-2-Clause
// Reading one kvm_notify_bench --json result (the file a `micro` record
// names): {"arch":"x86_64","stores":N,"irqs":N,"repeats":N,"us":{name:us,...}}.
#pragma once

#include <string_view>

#include "bench/report/records.h"

namespace kvmmio::report {

// Fills `into`'s arch, stores, irqs, repeats and us from `text`. Throws
// std::runtime_error naming what is wrong for anything but that shape:
// "arch" a string, other top-level members numbers, "us" a non-empty object
// of numbers.
void read_micro_json(std::string_view text, MicroResult& into);

}  // namespace kvmmio::report
