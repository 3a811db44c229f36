// The --stats JSON writer.
#include "vmm/stats.h"

#include <cstdio>

namespace kvmmio::vmm {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string indent(int level) { return std::string(2 * level, ' '); }

void counters(std::string& out, const Counters& c, int level) {
  out += "{\n";
  for (size_t i = 0; i < c.size(); ++i) {
    out += indent(level + 1) + quote(c[i].first) + ": " + std::to_string(c[i].second);
    out += i + 1 < c.size() ? ",\n" : "\n";
  }
  out += indent(level) + "}";
}

}  // namespace

VcpuStats vcpu_stats(int index, const VcpuExitCounts& c) {
  VcpuStats s;
  s.index = index;
  c.each([&s](const char* name, uint64_t n) { s.exits.emplace_back(name, n); });
  s.total_exits = c.total();
  return s;
}

std::string to_json(const MachineStats& m) {
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.3f", m.wall_time_seconds);
  std::string out = "{\n";
  out += "  \"schema_version\": " + std::to_string(MachineStats::kSchemaVersion) + ",\n";
  out += "  \"cpus\": " + std::to_string(m.cpus) + ",\n";
  out += "  \"mem_bytes\": " + std::to_string(m.mem_bytes) + ",\n";
  out += "  \"gic\": " + quote(m.gic) + ",\n";
  out += "  \"wall_time_seconds\": " + std::string(wall) + ",\n";
  out += "  \"exit_status\": " + std::to_string(m.exit_status) + ",\n";
  out += "  \"stop_reason\": " + quote(m.stop_reason) + ",\n";
  out += "  \"unclaimed_mmio\": " + std::to_string(m.unclaimed_mmio) + ",\n";
  out += "  \"event_loop_wakeups\": " + std::to_string(m.event_loop_wakeups) + ",\n";
  out += "  \"vcpus\": [";
  for (size_t i = 0; i < m.vcpus.size(); ++i) {
    const VcpuStats& v = m.vcpus[i];
    out += i ? ",\n" : "\n";
    out += "    {\n";
    out += "      \"index\": " + std::to_string(v.index) + ",\n";
    out += "      \"total_exits\": " + std::to_string(v.total_exits) + ",\n";
    out += "      \"exits\": ";
    counters(out, v.exits, 3);
    out += "\n    }";
  }
  out += m.vcpus.empty() ? "],\n" : "\n  ],\n";
  out += "  \"devices\": [";
  for (size_t i = 0; i < m.devices.size(); ++i) {
    const DeviceStats& d = m.devices[i];
    out += i ? ",\n" : "\n";
    out += "    {\n";
    out += "      \"name\": " + quote(d.name) + ",\n";
    out += "      \"type\": " + quote(d.type) + ",\n";
    out += "      \"base\": " + std::to_string(d.base) + ",\n";
    out += "      \"size\": " + std::to_string(d.size) + ",\n";
    out += "      \"spi\": " + std::to_string(d.spi) + ",\n";
    out += "      \"counters\": ";
    counters(out, d.counters, 3);
    out += "\n    }";
  }
  out += m.devices.empty() ? "]\n" : "\n  ]\n";
  out += "}\n";
  return out;
}

}  // namespace kvmmio::vmm
