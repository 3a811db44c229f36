// SPDX-License-Identifier: BSD-2-Clause
// kvmmio list, stop and console (see the header).
#include "vmm/cli/vm_commands.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "vmm/control/control_client.h"
#include "vmm/process/raw_terminal.h"
#include "vmm/process/unix_socket.h"
#include "vmm/control/vm_directory.h"

namespace kvmmio::vmm {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// 45s, 12m05s, 3h07m, 2d04h: the two largest units.
std::string uptime_text(int64_t s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                                   static_cast<long long>(s % 60));
  else if (s < 86400) std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                                    static_cast<long long>(s % 3600 / 60));
  else std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400),
                     static_cast<long long>(s % 86400 / 3600));
  return buf;
}

// A field of an info answer as text ("-" when it is missing or odd: the
// VM is another kvmmio version's, or it answered with an error).
std::string field(const Json& info, const char* key) {
  const auto it = info.find(key);
  if (it == info.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return "-";
}

std::string macs_text(const Json& info) {
  const auto it = info.find("macs");
  if (it == info.end() || !it->is_array() || it->empty()) return "-";
  std::string text;
  for (const Json& m : *it) {
    if (!m.is_string()) continue;
    if (!text.empty()) text += ",";
    text += m.get<std::string>();
  }
  return text.empty() ? "-" : text;
}

// Waits up to `limit` for the VM to exit; whether it did.
bool wait_exit(const VmExitWatch& watch, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!watch.exited()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// Writes all of [data, data + n) to fd; false if it cannot.
bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

int run_list(std::FILE* out) {
  struct Row {
    std::string name, pid, state, uptime, vcpus, mem, cid, macs;
  };
  std::vector<Row> rows;
  for (const std::string& name : vm_names()) {
    const std::optional<pid_t> pid = running_vm_pid(name);
    if (!pid) continue;  // a directory a killed kvmmio left: its next run takes it over
    Row row{name, std::to_string(*pid), "?", "-", "-", "-", "-", "-"};
    try {
      const Json info = Json::parse(control_request(vm_file(name, kApiSocketFile), "info", "kvmmio list: " + name,
                                                    name, /*timeout_ms=*/2000),
                                    nullptr, /*allow_exceptions=*/false);
      if (info.is_object() && !info.contains("error")) {
        row.state = field(info, "state");
        const auto up = info.find("uptime_s");
        if (up != info.end() && up->is_number_integer()) row.uptime = uptime_text(up->get<int64_t>());
        row.vcpus = field(info, "vcpus");
        row.mem = field(info, "mem_mib");
        if (row.mem != "-") row.mem += "M";
        row.cid = field(info, "cid");
        row.macs = macs_text(info);
      }
    } catch (const UsageError& e) {
      // It runs (its pidfile is locked) but does not answer: say so in its row.
      row.state = "unreachable";
    }
    rows.push_back(std::move(row));
  }
  std::vector<Row> table{{"NAME", "PID", "STATE", "UPTIME", "CPUS", "MEM", "CID", "MACS"}};
  table.insert(table.end(), rows.begin(), rows.end());
  size_t w[7] = {};
  for (const Row& r : table) {
    const std::string* cells[7] = {&r.name, &r.pid, &r.state, &r.uptime, &r.vcpus, &r.mem, &r.cid};
    for (int i = 0; i < 7; ++i) w[i] = std::max(w[i], cells[i]->size());
  }
  for (const Row& r : table)
    std::fprintf(out, "%-*s  %*s  %-*s  %*s  %*s  %*s  %*s  %s\n", static_cast<int>(w[0]), r.name.c_str(),
                 static_cast<int>(w[1]), r.pid.c_str(), static_cast<int>(w[2]), r.state.c_str(),
                 static_cast<int>(w[3]), r.uptime.c_str(), static_cast<int>(w[4]), r.vcpus.c_str(),
                 static_cast<int>(w[5]), r.mem.c_str(), static_cast<int>(w[6]), r.cid.c_str(), r.macs.c_str());
  std::fflush(out);
  return 0;
}

int run_stop(const StopOptions& o, std::FILE* out) {
  const std::string shown = "kvmmio stop " + o.name;
  const VmExitWatch watch(o.name);
  if (!watch.valid() || watch.exited())
    throw UsageError(shown + ": no VM named " + o.name + " runs (kvmmio list shows those that do)");
  const std::string socket = vm_file(o.name, kApiSocketFile);
  control_request(socket, "shutdown", shown, o.name);
  if (wait_exit(watch, std::chrono::seconds(o.timeout_s))) {
    std::fprintf(out, "%s: powered off\n", o.name.c_str());
    return 0;
  }
  std::fprintf(out, "%s: the guest did not power off within %d s: quitting it\n", o.name.c_str(), o.timeout_s);
  try {
    control_request(socket, "quit", shown, o.name);
  } catch (const UsageError&) {
    // It may have exited meanwhile: the watch says.
  }
  constexpr std::chrono::seconds kQuitLimit{10};
  if (wait_exit(watch, kQuitLimit)) {
    std::fprintf(out, "%s: stopped\n", o.name.c_str());
    return 0;
  }
  const std::optional<pid_t> pid = running_vm_pid(o.name);
  std::fprintf(out, "%s: still running %lld s after quit%s: kill it\n", o.name.c_str(),
               static_cast<long long>(kQuitLimit.count()),
               pid ? (" (kvmmio, PID " + std::to_string(*pid) + ")").c_str() : "");
  return 1;
}

int run_console_attach(const std::string& name) {
  const std::string shown = "kvmmio console " + name;
  ::signal(SIGPIPE, SIG_IGN);  // a console socket closing mid-write: write() fails instead
  UniqueFd sock = connect_unix_socket(vm_file(name, kConsoleSocketFile));
  if (!sock) {
    const int err = errno;
    if (err == ENOENT && running_vm_pid(name))
      throw UsageError(shown + ": " + name +
                       " runs, but its console is not on a socket: start it with --console serial,socket "
                       "(or virtio,socket) to attach to it");
    if (err == ENOENT || err == ECONNREFUSED)
      throw UsageError(shown + ": no VM named " + name + " runs (kvmmio list shows those that do)");
    throw UsageError(shown + ": cannot connect: " + std::strerror(err));
  }
  const bool terminal = terminal_role(STDIN_FILENO) == TerminalRole::kForeground;
  if (terminal) std::fprintf(stderr, "kvmmio console %s: attached; Ctrl-] detaches\n", name.c_str());
  std::optional<RawTerminal> raw;
  if (terminal) raw.emplace(STDIN_FILENO);
  bool input_open = true;
  const char* ended = "the VM's console closed (the VM stopped, or another client has it)";
  char buf[4096];
  for (;;) {
    pollfd fds[2] = {{sock.get(), POLLIN, 0}, {input_open ? STDIN_FILENO : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      ended = "poll failed";
      break;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = ::read(sock.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (!write_all(STDOUT_FILENO, buf, static_cast<size_t>(n))) {
        ended = "the output closed";
        break;
      }
    }
    if (input_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        input_open = false;  // a pipe ran dry: keep showing the console
        continue;
      }
      const char* detach = terminal ? static_cast<const char*>(std::memchr(buf, kDetachKey, static_cast<size_t>(n)))
                                    : nullptr;
      const size_t keep = detach ? static_cast<size_t>(detach - buf) : static_cast<size_t>(n);
      if (keep > 0 && !write_all(sock.get(), buf, keep)) break;
      if (detach) {
        ended = nullptr;
        break;
      }
    }
  }
  raw.reset();
  if (terminal) std::fprintf(stderr, "\r\nkvmmio console %s: %s\n", name.c_str(), ended ? ended : "detached");
  return 0;
}

}  // namespace kvmmio::vmm
