// SPDX-License-Identifier: BSD-2-Clause
// SettingWords: how a device's messages name what was configured and the
// setting that would fix a problem, in the words of whoever configured it:
// a program's options ("--disk a.img,ro=on"), an API's fields
// ("kvmmio_blk_config.read_only = 1"). The library knows a setting by its
// options struct's field and nothing of a program's words: a caller with
// words of its own puts a SettingWords in the device's options
// (DiskOptions::words, NetOptions::words); without one, messages name the
// fields themselves (struct_words()).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kvmmio/base/export.h"

namespace kvmmio {

// One setting by the library's name for it: a field of the device's
// options and its value, e.g. {"read_only", "true"}, {"engine",
// "threads"}, {"bridge", "br0"}.
struct Setting {
  std::string_view field;
  std::string_view value;
};

class KVMMIO_EXPORT SettingWords {
 public:
  virtual ~SettingWords();

  // What was configured: the kind of device ("disk", "net") and the
  // setting that tells it apart ({"path", "a.img"}, {"tap", "t0"}).
  // struct_words(): "disk a.img".
  virtual std::string named(std::string_view device, Setting id) const;
  // The same as configured with `given`: "disk a.img with engine =
  // io_uring".
  virtual std::string named(std::string_view device, Setting id, Setting given) const;
  // How to ask for `wanted`: "set read_only = true".
  virtual std::string ask(std::string_view device, Setting id, Setting wanted) const;
};

// The words of the options structs' own fields.
KVMMIO_EXPORT const SettingWords& struct_words();

// An options struct's words: `words`, or without them the fields' own.
inline const SettingWords& words_of(const std::shared_ptr<const SettingWords>& words) {
  return words ? *words : struct_words();
}

}  // namespace kvmmio
