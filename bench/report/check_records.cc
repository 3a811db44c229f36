// SPDX-License-Identifier: BSD-2-Clause
// parse_check_records: each line a JSON object, its members typed as the
// verdict reads them; nothing else about the record is judged here.
#include "bench/report/check_records.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "bench/report/input_error.h"
#include "bench/report/kinds.h"
#include "bench/report/record_lines.h"

namespace kvmmio::report {
namespace {

using Json = nlohmann::json;

// The member `key` of `obj`, or null when it is absent: as jq reads .key.
const Json& member(const Json& obj, const char* key) {
  static const Json null;
  const auto it = obj.find(key);
  return it == obj.end() ? null : *it;
}

std::optional<std::string> text(const Json& obj, const char* key, const Source& at) {
  const Json& v = member(obj, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_string()) throw InputError(at, std::string("\"") + key + "\" is not a string");
  return v.get<std::string>();
}

std::optional<double> number(const Json& v, const std::string& what, const Source& at) {
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) throw InputError(at, what + " is not a number or null");
  return v.get<double>();
}

std::optional<unsigned> whole(const Json& obj, const char* key, unsigned min, const Source& at) {
  const Json& v = member(obj, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number_unsigned() || v.get<uint64_t>() < min || v.get<uint64_t>() > std::numeric_limits<unsigned>::max())
    throw InputError(at, std::string("\"") + key + "\" is not a whole number from " + std::to_string(min) +
                             " to 4294967295");
  return static_cast<unsigned>(v.get<uint64_t>());
}

// An object of numbers and nulls (counters, outside), or nothing.
template <class Fn>
bool each_counter(const Json& obj, const char* key, const Source& at, Fn fn) {
  const Json& v = member(obj, key);
  if (v.is_null()) return false;
  if (!v.is_object()) throw InputError(at, std::string("\"") + key + "\" is not an object");
  for (const auto& [name, x] : v.items()) fn(name, number(x, "\"" + std::string(key) + "\"." + name, at));
  return true;
}

Run read_run(const Json& obj, std::string kind, const Source& at) {
  Run r;
  r.source = at;
  r.kind = std::move(kind);
  const std::optional<std::string> config = text(obj, "config", at);
  if (!config) throw InputError(at, "\"config\" missing");
  r.config = *config;
  r.failed = text(obj, "failed", at);
  r.rep = whole(obj, "rep", 1, at).value_or(0);
  r.params.mtu = whole(obj, "mtu", 0, at);
  r.params.payload = whole(obj, "payload", 0, at);
  r.params.streams = whole(obj, "streams", 0, at);
  r.params.bs = whole(obj, "bs", 0, at);
  r.params.depth = whole(obj, "depth", 0, at);
  r.params.dir = text(obj, "dir", at);
  r.params.rw = text(obj, "rw", at);
  if (const KindSpec* spec = find_kind(r.kind))
    for (const char* v : spec->values)
      if (const std::optional<double> x = number(member(obj, v), std::string("\"") + v + "\"", at)) r.values[v] = *x;
  std::map<std::string, double> counters;
  if (each_counter(obj, "counters", at, [&](const std::string& n, std::optional<double> x) {
        if (x) counters[n] = *x;
      }))
    r.counters = std::move(counters);
  std::map<std::string, std::optional<double>> outside;
  if (each_counter(obj, "outside", at, [&](const std::string& n, std::optional<double> x) { outside[n] = x; }))
    r.outside = std::move(outside);
  return r;
}

}  // namespace

CheckRecords parse_check_records(std::string_view lines, const std::string& name) {
  CheckRecords out;
  for_each_record_line(lines, [&](std::string_view line, int number) {
    const Source at{name, number};
    const Json obj = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (obj.is_discarded()) throw InputError(at, "not JSON");
    if (!obj.is_object()) throw InputError(at, "not a JSON object");
    const std::optional<std::string> kind = text(obj, "kind", at);
    if (!kind) throw InputError(at, "\"kind\" missing");
    if (*kind == "meta") return;
    if (*kind == "micro") {
      out.micro = true;
      return;
    }
    out.runs.push_back(read_run(obj, *kind, at));
  });
  return out;
}

}  // namespace kvmmio::report
