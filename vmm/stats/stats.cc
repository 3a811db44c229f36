// SPDX-License-Identifier: BSD-2-Clause
// The --stats JSON writer.
#include "vmm/stats/stats.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace kvmmio::vmm {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order written

Json counters(const Counters& c) {
  Json out = Json::object();
  for (const auto& [name, value] : c) out[name] = value;
  return out;
}

// Microseconds are all a start-up phase means here.
double ms(double v) { return std::round(v * 1000) / 1000; }

// {"exec_to_main": ..., each phase in order ..., "to_first_run": ...}; the
// first and last only where known (machine.h, startup_timeline.h).
Json startup(const StartupStats& s) {
  Json out = Json::object();
  if (s.exec_to_main_ms) out["exec_to_main"] = ms(*s.exec_to_main_ms);
  for (const auto& [name, v] : s.phases_ms) out[name] = ms(v);
  if (s.to_first_run_ms) out["to_first_run"] = ms(*s.to_first_run_ms);
  return out;
}

}  // namespace

VcpuStats vcpu_stats(int index, const VcpuExitCounts& c) {
  VcpuStats s;
  s.index = index;
  // The sum as VcpuExitCounts::total() makes it, without its object file:
  // the control-socket fuzz target links this file and no KVM code.
  c.each([&s](const char* name, uint64_t n) {
    s.exits.emplace_back(name, n);
    s.total_exits += n;
  });
  return s;
}

namespace {

Json document(const MachineStats& m) {
  Json doc = {
      {"schema_version", MachineStats::kSchemaVersion},
      {"cpus", m.cpus},
      {"mem_bytes", m.mem_bytes},
      {"gic", m.gic},
      // Milliseconds are all a wall time means here.
      {"wall_time_seconds", std::round(m.wall_time_seconds * 1000) / 1000},
      {"startup_ms", startup(m.startup)},
      {"exit_status", m.exit_status},
      {"stop_reason", m.stop_reason},
      {"reboots", m.reboots},
      {"unclaimed_mmio", m.unclaimed_mmio},
      {"event_loop_wakeups", m.event_loop_wakeups},
      {"paused", m.paused},
      {"footprint",
       {{"rss_outside_guest_ram_kib", m.rss_outside_guest_ram_kib},
        {"private_outside_guest_ram_kib", m.private_outside_guest_ram_kib},
        {"threads", m.threads}}},
      {"console", {{"destination", m.console_destination}, {"counters", counters(m.console)}}},
      {"vcpus", Json::array()},
      {"devices", Json::array()},
  };
  if (!m.api_socket.empty()) doc["api"] = {{"socket", m.api_socket}, {"counters", counters(m.api)}};
  for (const VcpuStats& v : m.vcpus)
    doc["vcpus"].push_back(
        {{"index", v.index}, {"total_exits", v.total_exits}, {"exits", counters(v.exits)}});
  for (const DeviceStats& d : m.devices)
    doc["devices"].push_back({{"name", d.name},
                              {"type", d.type},
                              {"base", d.base},
                              {"size", d.size},
                              {"spi", d.spi},
                              {"counters", counters(d.counters)}});
  return doc;
}

}  // namespace

// Invalid UTF-8 in a name or stop reason is replaced, never thrown on.
std::string to_json(const MachineStats& m) {
  return document(m).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string to_json_line(const MachineStats& m) {
  return document(m).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace kvmmio::vmm
