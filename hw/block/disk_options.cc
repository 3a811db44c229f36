// SPDX-License-Identifier: BSD-2-Clause
// Parsing of --disk specifications; the file itself is checked when it is
// opened (DiskImage::open). And the words messages about a disk use
// (disk_words.h), the --disk ones next to their parser.
#include "kvmmio/block/disk_options.h"

#include "hw/block/disk_words.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/parse.h"

namespace kvmmio::block {
namespace {

std::string shown(std::string_view key, std::string_view value) {
  return "--disk ..." + std::string(key) + "=" + std::string(value);
}

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

bool parse_on_off(std::string_view key, std::string_view value) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw UserError(shown(key, value) + ": choose on or off");
}

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

DiskOptions DiskOptions::parse(std::string_view spec) {
  DiskOptions o;
  const size_t comma = spec.find(',');
  o.path = std::string(spec.substr(0, comma));
  if (o.path.empty())
    throw UserError("--disk " + std::string(spec) + ": the image comes first, e.g. --disk debian.img,ro=on");
  if (o.path.find('=') != std::string::npos && comma != std::string::npos)
    // "ro=on,disk.img": keys before the path are a mistake worth naming.
    throw UserError("--disk " + std::string(spec) + ": the image path comes first, then KEY=VALUE options");
  if (comma == std::string::npos) return o;
  const std::string_view rest = spec.substr(comma + 1);
  if (rest.empty())
    throw UserError("--disk " + std::string(spec) + ": an option is missing after the comma, e.g. " + o.path +
                    ",ro=on");
  for (const auto& [key, value] : parse_key_values(rest, "--disk " + std::string(spec))) {
    if (key == "ro") {
      o.read_only = parse_on_off(key, value);
    } else if (key == "device") {
      o.block_device = parse_on_off(key, value);
    } else if (key == "serial") {
      if (value.empty() || value.size() > spec::kIdBytes)
        throw UserError(shown(key, value) + ": give 1 to 20 bytes (the guest reads them as the disk's serial)");
      o.serial = std::string(value);
    } else if (key == "cache") {
      if (value == "writeback") o.cache = CacheMode::kWriteback;
      else if (value == "none") o.cache = CacheMode::kNone;
      else throw UserError(shown(key, value) + ": choose writeback (the host page cache) or none (O_DIRECT)");
    } else if (key == "engine") {
      if (value == "io_uring") o.engine = EngineChoice::kIoUring;
      else if (value == "threads") o.engine = EngineChoice::kThreads;
      else throw UserError(shown(key, value) + ": choose io_uring (the default) or threads (a worker thread with pread/pwritev)");
    } else if (key == "queues") {
      try {
        o.queues = static_cast<unsigned>(parse_uint(value, shown(key, value), 1, kMaxDiskQueues));
      } catch (const UserError&) {
        throw UserError(shown(key, value) + ": give a whole number of request queues from 1 to " +
                        std::to_string(kMaxDiskQueues) +
                        " (the guest uses at most one per vCPU), or leave queues= out for one per vCPU");
      }
    } else {
      try {
        o.transport.set(key, value);
      } catch (const UserError& e) {
        throw UserError(shown(key, value) + ": " + e.what() +
                        " (the disk's own keys are ro, serial, cache, engine and queues, and device for a block device)");
      }
    }
  }
  return o;
}

}  // namespace kvmmio::block
