// SPDX-License-Identifier: BSD-2-Clause
// CacheMode's name, and the words messages about a disk use (disk_words.h),
// through the SettingWords of whoever configured it.
#include "kvmmio/block/disk_options.h"

#include "hw/block/disk_words.h"

namespace kvmmio::block {

const char* to_string(CacheMode mode) { return mode == CacheMode::kNone ? "none" : "writeback"; }

Setting disk_setting(DiskSetting setting) {
  switch (setting) {
    case DiskSetting::kReadOnly: return {"read_only", "true"};
    case DiskSetting::kBlockDevice: return {"block_device", "true"};
    case DiskSetting::kCacheWriteback: return {"cache", "writeback"};
    case DiskSetting::kEngineIoUring: return {"engine", "io_uring"};
    case DiskSetting::kEngineThreads: return {"engine", "threads"};
  }
  return {"?", "?"};
}

std::string disk_named(const SettingWords& words, const std::string& path) {
  return words.named("disk", {"path", path});
}

std::string disk_named(const SettingWords& words, const std::string& path, DiskSetting given) {
  return words.named("disk", {"path", path}, disk_setting(given));
}

std::string disk_ask(const SettingWords& words, DiskSetting setting, const std::string& path) {
  return words.ask("disk", {"path", path}, disk_setting(setting));
}

}  // namespace kvmmio::block
