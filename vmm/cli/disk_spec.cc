// SPDX-License-Identifier: BSD-2-Clause
// --disk specifications; the file itself is checked when it is opened
// (DiskImage::open).
#include <string>

#include "kvmmio/base/error.h"
#include "vmm/cli/device_specs.h"
#include "vmm/cli/option_words.h"
#include "vmm/process/parse.h"

namespace kvmmio::vmm {

using block::CacheMode;
using block::DiskOptions;
using block::EngineChoice;
using block::kMaxDiskQueues;

namespace {

std::string shown(std::string_view key, std::string_view value) {
  return "--disk ..." + std::string(key) + "=" + std::string(value);
}

bool parse_on_off(std::string_view key, std::string_view value) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw UserError(shown(key, value) + ": choose on or off");
}

}  // namespace

DiskOptions parse_disk_spec(std::string_view spec) {
  DiskOptions o;
  o.words = option_words();
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
      if (value.empty() || value.size() > block::spec::kIdBytes)
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
        set_transport_key(o.transport, key, value);
      } catch (const UserError& e) {
        throw UserError(shown(key, value) + ": " + e.what() +
                        " (the disk's own keys are ro, serial, cache, engine and queues, and device for a block device)");
      }
    }
  }
  return o;
}

}  // namespace kvmmio::vmm
