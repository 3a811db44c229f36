// SPDX-License-Identifier: BSD-2-Clause
// The options structs' own words (see the header).
#include "kvmmio/base/setting_words.h"

namespace kvmmio {

SettingWords::~SettingWords() = default;

std::string SettingWords::named(std::string_view device, Setting id) const {
  return std::string(device) + " " + std::string(id.value);
}

std::string SettingWords::named(std::string_view device, Setting id, Setting given) const {
  return named(device, id) + " with " + std::string(given.field) + " = " + std::string(given.value);
}

std::string SettingWords::ask(std::string_view, Setting, Setting wanted) const {
  return "set " + std::string(wanted.field) + " = " + std::string(wanted.value);
}

const SettingWords& struct_words() {
  static const SettingWords words;
  return words;
}

}  // namespace kvmmio
