// SPDX-License-Identifier: BSD-2-Clause
// How messages about a disk (DiskImage::open(), lock_image(), VirtioBlock)
// word the disk and the settings that would fix a problem, in the words of
// whoever configured it (DiskOptions::wording): the kvmmio program's --disk
// option or the C API's kvmmio_blk_config (kvmmio/kvmmio.h).
#pragma once

#include <string>

#include "kvmmio/base/error.h"

namespace kvmmio::block {

enum class DiskSetting { kReadOnly, kBlockDevice, kCacheWriteback, kEngineIoUring, kEngineThreads };

// The disk a message is about: "--disk PATH" or "kvmmio_blk_config.path PATH".
std::string disk_named(Wording wording, const std::string& path);
// The same with a setting it was given: "--disk PATH,engine=io_uring" or
// "kvmmio_blk_config.path PATH with kvmmio_blk_config.engine = KVMMIO_BLK_ENGINE_IO_URING".
std::string disk_named(Wording wording, const std::string& path, DiskSetting given);
// How to ask for `setting`: "give ro=on (--disk PATH,ro=on)" or "set
// kvmmio_blk_config.read_only = 1".
std::string disk_ask(Wording wording, DiskSetting setting, const std::string& path);

}  // namespace kvmmio::block
