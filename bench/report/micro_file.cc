// SPDX-License-Identifier: BSD-2-Clause
// read_micro_json: shape checks over the generic JSON reader.
#include "bench/report/micro_file.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kvmmio::report {

void read_micro_json(std::string_view text, MicroResult& into) {
  using Json = nlohmann::ordered_json;  // "us" keeps the bench's order
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) throw std::runtime_error("expected a JSON object");
  bool have_arch = false, have_us = false;
  for (const auto& [key, value] : doc.items()) {
    if (key == "arch") {
      if (!value.is_string()) throw std::runtime_error("\"arch\" is not a string");
      into.arch = value.get<std::string>();
      have_arch = true;
    } else if (key == "us") {
      if (!value.is_object() || value.empty())
        throw std::runtime_error("\"us\" is not a non-empty object of numbers");
      for (const auto& [name, us] : value.items()) {
        if (!us.is_number()) throw std::runtime_error("\"us\".\"" + name + "\" is not a number");
        into.us.emplace_back(name, us.get<double>());
      }
      have_us = true;
    } else if (!value.is_number()) {
      throw std::runtime_error("\"" + key + "\" is not a number");
    } else if (key == "stores") {
      into.stores = value.get<double>();
    } else if (key == "irqs") {
      into.irqs = value.get<double>();
    } else if (key == "repeats") {
      into.repeats = value.get<double>();
    }
    // Other numeric members (a later bench's extra parameters) are not
    // part of the report; they are ignored rather than refused.
  }
  if (!have_arch) throw std::runtime_error("no \"arch\" member");
  if (!have_us) throw std::runtime_error("no \"us\" member");
}

}  // namespace kvmmio::report
