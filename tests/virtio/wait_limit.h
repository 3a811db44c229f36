// SPDX-License-Identifier: BSD-2-Clause
// How long a test waits for something it expects (a frame, a used buffer,
// a thread's reply) before it fails. Only a failing test ever waits this
// long, so the limit is generous: on the arm64 platform the suites run
// under QEMU TCG beside other nested guests, and a loaded 2-core host can
// stall a guest for seconds between two of its steps.
#pragma once

#include <chrono>

namespace kvmmio::test {

inline constexpr std::chrono::seconds kWaitLimit{30};
inline constexpr int kWaitLimitMs = static_cast<int>(std::chrono::milliseconds(kWaitLimit).count());

}  // namespace kvmmio::test
