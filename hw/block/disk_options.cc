// SPDX-License-Identifier: BSD-2-Clause
// The words messages about a disk use (disk_words.h), in the program's
// --disk terms or the C API's kvmmio_blk_config ones.
#include "kvmmio/block/disk_options.h"

#include "hw/block/disk_words.h"
#include "kvmmio/base/error.h"

namespace kvmmio::block {
namespace {

// Each setting a message may ask for: its --disk key and value, and its
// kvmmio_blk_config field and value.
struct SettingWords {
  const char* option;
  const char* field;
};
constexpr SettingWords kSettingWords[] = {
    /* kReadOnly */ {"ro=on", "read_only = 1"},
    /* kBlockDevice */ {"device=on", "block_device = 1"},
    /* kCacheWriteback */ {"cache=writeback", "cache = KVMMIO_BLK_CACHE_WRITEBACK"},
    /* kEngineIoUring */ {"engine=io_uring", "engine = KVMMIO_BLK_ENGINE_IO_URING"},
    /* kEngineThreads */ {"engine=threads", "engine = KVMMIO_BLK_ENGINE_THREADS"},
};

const SettingWords& words_of(DiskSetting setting) { return kSettingWords[static_cast<size_t>(setting)]; }

}  // namespace

const char* to_string(CacheMode mode) { return mode == CacheMode::kNone ? "none" : "writeback"; }

std::string disk_named(Wording wording, const std::string& path) {
  return (wording == Wording::kCApi ? "kvmmio_blk_config.path " : "--disk ") + path;
}

std::string disk_named(Wording wording, const std::string& path, DiskSetting given) {
  if (wording == Wording::kCApi)
    return disk_named(wording, path) + " with kvmmio_blk_config." + words_of(given).field;
  return disk_named(wording, path) + "," + words_of(given).option;
}

std::string disk_ask(Wording wording, DiskSetting setting, const std::string& path) {
  if (wording == Wording::kCApi) return std::string("set kvmmio_blk_config.") + words_of(setting).field;
  return std::string("give ") + words_of(setting).option + " (" + disk_named(wording, path, setting) + ")";
}

}  // namespace kvmmio::block
