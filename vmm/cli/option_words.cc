// SPDX-License-Identifier: BSD-2-Clause
// The devices' messages in the program's words (see the header).
#include "vmm/cli/option_words.h"

#include <string>

namespace kvmmio::vmm {
namespace {

class OptionWords final : public SettingWords {
 public:
  // "--disk a.img" (the path comes first, without a key), "--net tap=t0".
  std::string named(std::string_view device, Setting id) const override {
    const std::string option = "--" + std::string(device) + " ";
    return device == "disk" ? option + std::string(id.value) : option + key_value(id);
  }
  std::string named(std::string_view device, Setting id, Setting given) const override {
    return named(device, id) + "," + key_value(given);
  }
  std::string ask(std::string_view device, Setting id, Setting wanted) const override {
    return "give " + key_value(wanted) + " (" + named(device, id, wanted) + ")";
  }

 private:
  // A DiskOptions or NetOptions field as its option's key and value.
  static std::string key_value(Setting s) {
    std::string key(s.field);
    if (key == "read_only") key = "ro";
    else if (key == "block_device") key = "device";
    return key + "=" + (s.value == "true" ? std::string("on") : std::string(s.value));
  }
};

}  // namespace

const std::shared_ptr<const SettingWords>& option_words() {
  static const std::shared_ptr<const SettingWords> words = std::make_shared<OptionWords>();
  return words;
}

}  // namespace kvmmio::vmm
