// SPDX-License-Identifier: BSD-2-Clause
// Logging: every message of the library goes through one sink, below a
// level. By default the sink writes "kvmmio: warning: MESSAGE" lines to
// stderr; an embedder installs its own (its log, journald, a ring buffer)
// with set_log_sink(), and the kvmmio program installs one that adds
// timestamps (--log-level chooses the level).
// Guest mistakes are reported through GuestErrorLog: counted always, printed
// rate-limited, so a hostile guest cannot flood the host's log.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "kvmmio/base/export.h"

namespace kvmmio {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// "debug", "info", "warn", "error": what --log-level takes.
KVMMIO_EXPORT const char* to_string(LogLevel level);
// The inverse; throws UserError starting with `shown` for anything else.
KVMMIO_EXPORT LogLevel parse_log_level(std::string_view text, std::string_view shown);

// Messages below the level are dropped before they are formatted.
// Default: kInfo.
KVMMIO_EXPORT void set_log_level(LogLevel level);
KVMMIO_EXPORT LogLevel log_level();

// Receives each message at or above the level: one complete message, no
// trailing newline, no "kvmmio:" prefix. Called from whichever thread
// logs (vCPU threads, the event loop, ...), one call at a time: the sink
// need not lock, but must not log itself.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;
// Installs `sink`; an empty one restores the default stderr sink.
KVMMIO_EXPORT void set_log_sink(LogSink sink);
// The default sink's line: "kvmmio: warning: MESSAGE\n" (info has no
// level word), for sinks that only add to it.
KVMMIO_EXPORT std::string format_log_line(LogLevel level, std::string_view message);

KVMMIO_EXPORT void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define KVMMIO_LOG_INFO(...) ::kvmmio::log(::kvmmio::LogLevel::kInfo, __VA_ARGS__)
#define KVMMIO_LOG_WARN(...) ::kvmmio::log(::kvmmio::LogLevel::kWarn, __VA_ARGS__)
#define KVMMIO_LOG_ERROR(...) ::kvmmio::log(::kvmmio::LogLevel::kError, __VA_ARGS__)
#define KVMMIO_LOG_DEBUG(...) ::kvmmio::log(::kvmmio::LogLevel::kDebug, __VA_ARGS__)

// One per component that faces the guest. The first kBurst errors are
// printed, then one in every kEvery; all are counted.
class KVMMIO_EXPORT GuestErrorLog {
 public:
  static constexpr uint64_t kBurst = 10;
  static constexpr uint64_t kEvery = 1000;

  explicit GuestErrorLog(const char* component) : component_(component) {}

  void report(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  const char* component_;
  std::atomic<uint64_t> count_{0};
};

}  // namespace kvmmio
