// A small JSON reader (RFC 8259): enough to load kvm_notify_bench results
// and for the tests to read net_report's own output back. Objects keep their
// members in document order.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kvmmio::report {

struct JsonValue;
using JsonArray = std::vector<JsonValue>;
using JsonObject = std::vector<std::pair<std::string, JsonValue>>;

struct JsonValue {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> v;

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v); }
  bool is_number() const { return std::holds_alternative<double>(v); }
  bool is_string() const { return std::holds_alternative<std::string>(v); }
  bool is_array() const { return std::holds_alternative<JsonArray>(v); }
  bool is_object() const { return std::holds_alternative<JsonObject>(v); }
  // The accessors throw std::runtime_error on the wrong type or a missing
  // member, so a test that reads the wrong thing fails instead of crashing.
  double number() const;
  const std::string& string() const;
  const JsonArray& array() const;
  const JsonObject& object() const;
  const JsonValue& operator[](std::string_view key) const;
  const JsonValue& operator[](size_t index) const;
  const JsonValue* find(std::string_view key) const;  // nullptr if absent
};

// Throws std::runtime_error "line L: what" for text that is not one JSON
// value (with optional surrounding whitespace).
JsonValue parse_json(std::string_view text);

}  // namespace kvmmio::report
