// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: a hostile control-socket client against the request
// parser and dispatcher (vmm/control/control_protocol.h), behind a fake machine
// (FakeVmControl). The input is split into lines as the server splits
// them, each cut at the server's line limit (a longer one never reaches
// the parser). The checks, besides ASan and UBSan:
//  - every answer is one line of JSON, an object;
//  - an answer is an error exactly when it has "error", and a request
//    that was answered with an error did nothing to the machine;
//  - a non-error answer is only for one of the six commands.
// Run by scripts/fuzz.sh with -rss_limit_mb and -timeout, as the others.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "../tests/vmm/fake_vm_control.h"
#include "kvmmio/base/log.h"
#include "vmm/control/control_protocol.h"
#include "vmm/control/control_server.h"

namespace {

[[noreturn]] void violated(const char* what, std::string_view line) {
  std::fprintf(stderr, "fuzz invariant: %s (request of %zu bytes)\n", what, line.size());
  std::abort();
}

int actions(const kvmmio::vmm::test::FakeVmControl& vm) {
  return vm.pauses + vm.resumes + vm.power_key_presses + vm.quits;
}

void one_request(std::string_view line, kvmmio::vmm::test::FakeVmControl& vm) {
  const int before = actions(vm);
  const kvmmio::vmm::ControlReply r = kvmmio::vmm::handle_control_request(line, vm);
  if (r.line.find('\n') != std::string::npos) violated("an answer of more than one line", line);
  const auto answer = nlohmann::json::parse(r.line, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded() || !answer.is_object()) violated("an answer that is not a JSON object", line);
  if (r.error != answer.contains("error")) violated("error flag and \"error\" key disagree", line);
  if (r.error && actions(vm) != before) violated("an error answer acted on the machine", line);
  if (!r.error) {
    const auto request = nlohmann::json::parse(line, nullptr, false);
    const std::string cmd = request.value("cmd", std::string());
    if (cmd != "stats" && cmd != "info" && cmd != "pause" && cmd != "resume" && cmd != "shutdown" &&
        cmd != "quit")
      violated("a non-error answer to something not a command", line);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvmmio::set_log_level(kvmmio::LogLevel::kError);
  kvmmio::vmm::test::FakeVmControl vm;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  while (!in.empty()) {
    const size_t nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    if (line.size() > kvmmio::vmm::ControlServer::kMaxLine) continue;  // refused before parsing
    one_request(line, vm);
  }
  return 0;
}
