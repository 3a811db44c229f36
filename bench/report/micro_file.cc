// read_micro_json: shape checks over the generic JSON reader.
#include "bench/report/micro_file.h"

#include <stdexcept>

#include "bench/report/json_value.h"

namespace kvmmio::report {

void read_micro_json(std::string_view text, MicroResult& into) {
  const JsonValue doc = parse_json(text);
  if (!doc.is_object()) throw std::runtime_error("expected a JSON object");
  bool have_arch = false, have_us = false;
  for (const auto& [key, value] : doc.object()) {
    if (key == "arch") {
      if (!value.is_string()) throw std::runtime_error("\"arch\" is not a string");
      into.arch = value.string();
      have_arch = true;
    } else if (key == "us") {
      if (!value.is_object() || value.object().empty())
        throw std::runtime_error("\"us\" is not a non-empty object of numbers");
      for (const auto& [name, us] : value.object()) {
        if (!us.is_number()) throw std::runtime_error("\"us\".\"" + name + "\" is not a number");
        into.us.emplace_back(name, us.number());
      }
      have_us = true;
    } else if (!value.is_number()) {
      throw std::runtime_error("\"" + key + "\" is not a number");
    } else if (key == "stores") {
      into.stores = value.number();
    } else if (key == "irqs") {
      into.irqs = value.number();
    } else if (key == "repeats") {
      into.repeats = value.number();
    }
    // Other numeric members (a later bench's extra parameters) are not
    // part of the report; they are ignored rather than refused.
  }
  if (!have_arch) throw std::runtime_error("no \"arch\" member");
  if (!have_us) throw std::runtime_error("no \"us\" member");
}

}  // namespace kvmmio::report
