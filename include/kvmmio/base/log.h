// Logging. Messages go to stderr with a severity prefix.
// Guest mistakes are reported through GuestErrorLog: counted always, printed
// rate-limited, so a hostile guest cannot flood the host's log.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvmmio {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

void set_log_level(LogLevel level);
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define KVMMIO_LOG_INFO(...) ::kvmmio::log(::kvmmio::LogLevel::kInfo, __VA_ARGS__)
#define KVMMIO_LOG_WARN(...) ::kvmmio::log(::kvmmio::LogLevel::kWarn, __VA_ARGS__)
#define KVMMIO_LOG_ERROR(...) ::kvmmio::log(::kvmmio::LogLevel::kError, __VA_ARGS__)
#define KVMMIO_LOG_DEBUG(...) ::kvmmio::log(::kvmmio::LogLevel::kDebug, __VA_ARGS__)

// One per component that faces the guest. The first kBurst errors are
// printed, then one in every kEvery; all are counted.
class GuestErrorLog {
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
