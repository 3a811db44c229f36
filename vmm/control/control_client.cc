// SPDX-License-Identifier: BSD-2-Clause
// kvmmio ctl (see the header).
#include "vmm/control/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "vmm/process/unix_socket.h"
#include "vmm/process/usage_error.h"
#include "vmm/control/vm_directory.h"

namespace kvmmio::vmm {
namespace {

using Json = nlohmann::json;

// A stats answer grows with the devices; this is far above any.
constexpr size_t kMaxAnswer = 4 << 20;

std::string connect_fix(int err, const std::string& name) {
  switch (err) {
    case ENOENT:
      return name.empty() ? "no such socket: is kvmmio running with --api-socket at this path?"
                          : "no VM named " + name + " runs (kvmmio list shows those that do)";
    case ECONNREFUSED: return "nobody listens on it (its kvmmio has exited): start the VM again";
    case EACCES:
    case EPERM: return "permission denied: run as the user kvmmio runs as (--user), or as root";
    default: return std::strerror(err);
  }
}

}  // namespace

std::string control_request(const std::string& socket, const std::string& command, const std::string& shown,
                            const std::string& name, int timeout_ms) {
  UniqueFd fd = connect_unix_socket(socket);
  if (!fd) throw UsageError(shown + ": cannot connect: " + connect_fix(errno, name));
  const std::string request =
      nlohmann::json{{"cmd", command}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size()))
    throw UsageError(shown + ": cannot send the request: " + std::strerror(errno));

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string answer;
  for (;;) {
    const size_t nl = answer.find('\n');
    if (nl != std::string::npos) {
      answer.resize(nl);
      return answer;
    }
    if (answer.size() > kMaxAnswer) throw UsageError(shown + ": the answer has no end; is it a kvmmio control socket?");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd.get(), POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0)
      throw UsageError(shown + ": no answer within " + std::to_string(timeout_ms / 1000) +
                       " s; is the VM's kvmmio stuck? (kill -USR1 writes its --stats)");
    char buf[16384];
    const ssize_t r = ::read(fd.get(), buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw UsageError(shown + ": the connection closed without an answer" +
                       (answer.empty() ? std::string() : " line") + "; is it a kvmmio control socket?");
    answer.append(buf, static_cast<size_t>(r));
  }
}

int run_ctl(const CtlOptions& o, std::FILE* out, int timeout_ms) {
  const std::string shown = "kvmmio ctl " + (o.name.empty() ? o.socket : o.name);
  const std::string answer = control_request(o.socket, o.command, shown, o.name, timeout_ms);
  std::fprintf(out, "%s\n", answer.c_str());
  std::fflush(out);
  const auto doc = nlohmann::json::parse(answer, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    throw UsageError(shown + ": the answer is not a JSON object; is it a kvmmio control socket?");
  return doc.contains("error") ? 1 : 0;  // ctl's statuses: the header
}

std::optional<std::string> vm_holding_cid(uint32_t cid, const std::string& except) {
  for (const std::string& name : vm_names()) {
    if (name == except || !running_vm_pid(name)) continue;
    try {
      const Json info = Json::parse(control_request(vm_file(name, kApiSocketFile), "info", "kvmmio: " + name,
                                                    name, /*timeout_ms=*/1000),
                                    nullptr, /*allow_exceptions=*/false);
      const auto it = info.is_object() ? info.find("cid") : info.end();
      if (it != info.end() && it->is_number_unsigned() && it->get<uint64_t>() == cid) return name;
    } catch (const UsageError&) {
      // It does not answer: it cannot be named, the caller says "another VM".
    }
  }
  return std::nullopt;
}

}  // namespace kvmmio::vmm
