// SPDX-License-Identifier: BSD-2-Clause
// The control socket's request parser and dispatcher (see the header).
#include "vmm/control/control_protocol.h"

#include <nlohmann/json.hpp>

namespace kvmmio::vmm {
namespace {

using Json = nlohmann::ordered_json;

// Replies are ours; invalid UTF-8 from a name is replaced, never thrown on.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

ControlReply error(std::string_view message) { return {control_error_line(message), true}; }

ControlReply result(Json j) { return {dump(j), false}; }

constexpr const char* kCommands = "stats, info, pause, resume, shutdown or quit";

}  // namespace

std::string control_error_line(std::string_view message) {
  return dump(Json{{"error", std::string(message)}});
}

ControlReply handle_control_request(std::string_view line, VmControl& vm, const VmIdentity& identity) {
  // No exceptions from the parser: a malformed line is a discarded value.
  // Nesting is bounded by the line's length (the server's limit).
  const Json request = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded())
    return error(std::string("not JSON: send one object per line, e.g. {\"cmd\":\"stats\"}"));
  if (!request.is_object()) return error("the request must be a JSON object, e.g. {\"cmd\":\"stats\"}");
  const auto cmd_it = request.find("cmd");
  if (cmd_it == request.end()) return error("no \"cmd\": e.g. {\"cmd\":\"stats\"}");
  if (!cmd_it->is_string()) return error(std::string("\"cmd\" must be a string: ") + kCommands);
  for (const auto& [key, value] : request.items())
    if (key != "cmd") return error("unknown key \"" + key + "\": a request has \"cmd\" only");
  const std::string& cmd = cmd_it->get_ref<const std::string&>();

  if (cmd == "stats") return {to_json_line(vm.stats()), false};
  if (cmd == "info") {
    const auto up = std::chrono::steady_clock::now() - identity.started;
    return result({{"name", identity.name.empty() ? Json(nullptr) : Json(identity.name)},
                   {"pid", identity.pid},
                   {"state", vm.paused() ? "paused" : "running"},
                   {"uptime_s", std::chrono::duration_cast<std::chrono::seconds>(up).count()},
                   {"vcpus", vm.vcpu_count()},
                   {"mem_mib", identity.mem_bytes >> 20},
                   {"macs", identity.macs},
                   {"cid", identity.cid ? Json(*identity.cid) : Json(nullptr)}});
  }
  if (cmd == "pause") {
    const bool already = vm.paused();
    const int parked = vm.pause();
    return result({{"result", "paused"},
                   {"already", already},
                   {"parked_vcpus", parked},
                   {"vcpus", vm.vcpu_count()}});
  }
  if (cmd == "resume") {
    const bool was = vm.paused();
    vm.resume();
    return result({{"result", "resumed"}, {"was_paused", was}});
  }
  if (cmd == "shutdown") {
    vm.press_power_key();
    return result({{"result", "shutdown requested"},
                   {"detail", "the guest's power key was pressed; the guest decides whether it powers off"}});
  }
  if (cmd == "quit") {
    vm.quit();
    return result({{"result", "quitting"}});
  }
  // Not echoed: a command name can be anything up to the line's length.
  return error(std::string("unknown command: choose ") + kCommands);
}

}  // namespace kvmmio::vmm
