// SPDX-License-Identifier: BSD-2-Clause
// The devices' messages in the program's words: a disk is "--disk PATH", a
// net device "--net tap=NAME", a setting its option's KEY=VALUE ("ro=on",
// "engine=threads", "bridge=br0"), and asking for one says which option to
// give ("give ro=on (--disk a.img,ro=on)"). The device parsers
// (device_specs.h) put these words in the options they make.
#pragma once

#include <memory>

#include "kvmmio/base/setting_words.h"

namespace kvmmio::vmm {

const std::shared_ptr<const SettingWords>& option_words();

}  // namespace kvmmio::vmm
