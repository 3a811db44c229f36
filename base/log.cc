// Logging to stderr, and the rate-limited guest-error log.
#include "kvmmio/base/log.h"

#include <cstdarg>
#include <cstdio>

namespace kvmmio {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};

const char* prefix(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "kvmmio: debug: ";
    case LogLevel::kInfo: return "kvmmio: ";
    case LogLevel::kWarn: return "kvmmio: warning: ";
    case LogLevel::kError: return "kvmmio: error: ";
  }
  return "kvmmio: ";
}

void vlog(LogLevel level, const char* extra, const char* fmt, va_list ap) {
  // One buffer and one write, so lines from different threads do not mix.
  char line[1024];
  int n = std::snprintf(line, sizeof(line), "%s%s", prefix(level), extra);
  if (n < 0 || static_cast<size_t>(n) >= sizeof(line)) n = 0;
  int m = std::vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
  size_t len = n + (m < 0 ? 0 : std::min<size_t>(m, sizeof(line) - n - 2));
  line[len++] = '\n';
  std::fwrite(line, 1, len, stderr);
}

}  // namespace

void set_log_level(LogLevel level) { g_level = level; }

void log(LogLevel level, const char* fmt, ...) {
  if (level < g_level.load()) return;
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
