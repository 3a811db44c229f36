// SPDX-License-Identifier: BSD-2-Clause
// The log sink and level, the default stderr sink, and the rate-limited
// guest-error log.
#include "kvmmio/base/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "kvmmio/base/error.h"

namespace kvmmio {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};

// The sink and the lock that makes its calls one at a time.
std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
LogSink& sink() {
  static LogSink s;
  return s;
}

const char* prefix(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "kvmmio: debug: ";
    case LogLevel::kInfo: return "kvmmio: ";
    case LogLevel::kWarn: return "kvmmio: warning: ";
    case LogLevel::kError: return "kvmmio: error: ";
  }
  return "kvmmio: ";
}

void emit(LogLevel level, std::string_view message) {
  std::lock_guard lock(sink_mutex());
  if (sink()) {
    sink()(level, message);
    return;
  }
  // One write per line, so lines from different threads do not mix.
  const std::string line = format_log_line(level, message);
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

void vlog(LogLevel level, const char* extra, const char* fmt, va_list ap) {
  if (level < g_level.load()) return;
  char text[1024];
  int n = std::snprintf(text, sizeof(text), "%s", extra);
  if (n < 0 || static_cast<size_t>(n) >= sizeof(text)) n = 0;
  const int m = std::vsnprintf(text + n, sizeof(text) - n, fmt, ap);
  const size_t len = n + (m < 0 ? 0 : std::min<size_t>(m, sizeof(text) - n - 1));
  emit(level, std::string_view(text, len));
}

}  // namespace

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "?";
}

LogLevel parse_log_level(std::string_view text, std::string_view shown) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError})
    if (text == to_string(l)) return l;
  throw UserError(std::string(shown) + ": choose debug, info, warn or error");
}

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level.load(); }

void set_log_sink(LogSink s) {
  std::lock_guard lock(sink_mutex());
  sink() = std::move(s);
}

std::string format_log_line(LogLevel level, std::string_view message) {
  std::string line = prefix(level);
  line.append(message);
  line += '\n';
  return line;
}

void log(LogLevel level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, "", fmt, ap);
  va_end(ap);
}

void GuestErrorLog::report(const char* fmt, ...) {
  uint64_t n = count_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n > kBurst && n % kEvery != 0) return;
  char extra[96];
  std::snprintf(extra, sizeof(extra), "guest error (%s, #%llu): ", component_,
                static_cast<unsigned long long>(n));
  va_list ap;
  va_start(ap, fmt);
  vlog(LogLevel::kWarn, extra, fmt, ap);
  va_end(ap);
}

}  // namespace kvmmio
