// SPDX-License-Identifier: BSD-2-Clause
// boot_timer: how long a VMM takes from its exec to each point of its
// guest's boot that the guest's console shows, for any VMM (kvmmio, QEMU,
// bench/boot_floor) run the same way (bench/startup.sh).
//
//   boot_timer [--marker TEXT] [--until clock|marker|exit] [--timeout S]
//              [--console FILE] [--json FILE] -- COMMAND [ARG...]
//
// Runs COMMAND in a process group of its own with its standard output on a
// pipe (the guest's console: kvmmio's and QEMU's with -serial stdio; its
// standard error is left as it is), stamps each line with the time since
// just before the exec, and stops at --until:
//   clock   the first line stamped by the guest kernel after its clock
//           started (the estimate of the clock's start is then known:
//           bench/boottime/console_times.h)
//   marker  the first line holding TEXT (e.g. the guest's init saying it
//           runs)
//   exit    COMMAND's own end (the guest powered off) (the default)
// and then, unless COMMAND has ended, sends its group SIGTERM (SIGKILL 5 s
// later). Prints one JSON object (to FILE with --json): first_output_ms,
// guest_clock_ms, marker_ms, exit_ms (COMMAND ended by itself), lines, and
// status (COMMAND's exit status, or 128 + the signal that ended it); each
// is null where the console did not show it. Exit status 0 when the
// --until point was reached (with exit: COMMAND's status 0), 1 when it was
// not before --timeout (default 120 s) or COMMAND's end, 2 on bad usage.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench/boottime/console_times.h"
#include "kvmmio/base/unique_fd.h"

namespace {

using kvmmio::UniqueFd;
using kvmmio::bench::ConsoleTimes;

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "boot_timer: %s\nusage: boot_timer [--marker TEXT] [--until clock|marker|exit] "
               "[--timeout S] [--console FILE] [--json FILE] -- COMMAND [ARG...]\n",
               what.c_str());
  std::exit(2);
}

enum class Until { kClock, kMarker, kExit };

struct Options {
  std::string marker, console, json;
  Until until = Until::kExit;
  double timeout_s = 120;
  std::vector<char*> command;  // null-terminated for execvp
};

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) usage_error(a == "-h" || a == "--help" ? "help" : a + " needs a value, or is unknown");
    const std::string v = argv[++i];
    if (a == "--marker") {
      o.marker = v;
    } else if (a == "--until") {
      if (v == "clock") o.until = Until::kClock;
      else if (v == "marker") o.until = Until::kMarker;
      else if (v == "exit") o.until = Until::kExit;
      else usage_error("--until '" + v + "': want clock, marker or exit");
    } else if (a == "--timeout") {
      char* end = nullptr;
      o.timeout_s = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end || !(o.timeout_s > 0)) usage_error("--timeout '" + v + "': want seconds > 0");
    } else if (a == "--console") {
      o.console = v;
    } else if (a == "--json") {
      o.json = v;
    } else {
      usage_error("unknown option " + a);
    }
  }
  if (i >= argc) usage_error("no COMMAND after --");
  if (o.until == Until::kMarker && o.marker.empty()) usage_error("--until marker needs --marker TEXT");
  for (; i < argc; ++i) o.command.push_back(argv[i]);
  o.command.push_back(nullptr);
  return o;
}

double now_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

std::string number(const std::optional<double>& v) {
  if (!v) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", *v);
  return b;
}

// Ends the group of `pid` unless it has ended: SIGTERM, then SIGKILL after
// 5 s. Returns its wait status.
int stop(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) == pid) return status;
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 500; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    ::usleep(10000);
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  UniqueFd console_copy(o.console.empty() ? -1
                                    : ::open(o.console.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!o.console.empty() && console_copy.get() < 0)
    usage_error("--console " + o.console + ": " + std::strerror(errno));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::perror("boot_timer: pipe");
    return 1;
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);

  const double start = now_ms();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("boot_timer: fork");
    return 1;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(write_end.get(), STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
    ::execvp(o.command[0], o.command.data());
    std::fprintf(stderr, "boot_timer: cannot run %s: %s\n", o.command[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // both sides, so the group exists before any kill
  write_end.reset();

  ConsoleTimes times(o.marker);
  std::string pending;
  bool reached = false, ended = false;
  std::optional<double> exit_ms;
  int status = 0;
  const double deadline = start + o.timeout_s * 1000;
  char buf[4096];
  while (!reached) {
    const double left = deadline - now_ms();
    if (left <= 0) break;
    pollfd p{read_end.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // the deadline is checked above
    const ssize_t got = ::read(read_end.get(), buf, sizeof buf);
    const double t = now_ms() - start;
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {  // COMMAND closed its output: it is ending
      if (!pending.empty()) times.line(pending, t);
      ::waitpid(pid, &status, 0);
      exit_ms = now_ms() - start;
      ended = true;
      break;
    }
    times.output(t);
    if (console_copy.get() >= 0 && ::write(console_copy.get(), buf, static_cast<size_t>(got)) != got) {
      std::perror("boot_timer: --console write");
      console_copy.reset();
    }
    pending.append(buf, static_cast<size_t>(got));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      times.line(std::string_view(pending).substr(0, nl), t);
      if ((o.until == Until::kClock && times.guest_clock_ms()) ||
          (o.until == Until::kMarker && times.marker_ms()))
        reached = true;
    }
  }
  if (!ended) status = stop(pid);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (o.until == Until::kExit) reached = ended && code == 0;

  std::string json = "{\"first_output_ms\":" + number(times.first_output_ms()) +
                     ",\"guest_clock_ms\":" + number(times.guest_clock_ms()) +
                     ",\"marker_ms\":" + number(times.marker_ms()) + ",\"exit_ms\":" + number(exit_ms) +
                     ",\"lines\":" + std::to_string(times.lines()) + ",\"status\":" + std::to_string(code) +
                     "}\n";
  if (o.json.empty()) {
    std::fputs(json.c_str(), stdout);
  } else {
    std::FILE* f = std::fopen(o.json.c_str(), "w");
    if (!f || std::fputs(json.c_str(), f) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "boot_timer: cannot write %s\n", o.json.c_str());
      return 1;
    }
  }
  if (!reached) {
    const char* what = o.until == Until::kClock    ? "a line stamped by the guest's clock"
                       : o.until == Until::kMarker ? "the marker"
                                                   : "COMMAND's end with status 0";
    std::fprintf(stderr, "boot_timer: %s did not come (%s, status %d)\n", what,
                 ended ? "COMMAND ended first" : "timed out", code);
    return 1;
  }
  return 0;
}
