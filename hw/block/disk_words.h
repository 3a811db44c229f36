// SPDX-License-Identifier: BSD-2-Clause
// How messages about a disk (DiskImage::open(), lock_image(), VirtioBlock)
// word the disk and the settings that would fix a problem: through the
// SettingWords of whoever configured it (DiskOptions::words), the disk
// known as {"path", PATH} and each setting by its DiskOptions field.
#pragma once

#include <string>

#include "kvmmio/base/setting_words.h"

namespace kvmmio::block {

enum class DiskSetting { kReadOnly, kBlockDevice, kCacheWriteback, kEngineIoUring, kEngineThreads };

// The setting as DiskOptions has it: {"read_only", "true"}, {"engine", "threads"}, ...
Setting disk_setting(DiskSetting setting);

// The disk a message is about ("--disk PATH" in the program's words).
std::string disk_named(const SettingWords& words, const std::string& path);
// The same with a setting it was given ("--disk PATH,engine=io_uring").
std::string disk_named(const SettingWords& words, const std::string& path, DiskSetting given);
// How to ask for `setting` ("give ro=on (--disk PATH,ro=on)").
std::string disk_ask(const SettingWords& words, DiskSetting setting, const std::string& path);

}  // namespace kvmmio::block
