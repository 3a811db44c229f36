// SPDX-License-Identifier: BSD-2-Clause
// DiskImage: a raw disk image (a regular file, or a block device with
// device=on), opened, checked and locked for one virtio-blk device.
//
// The path is opened by the rule of kvmmio/base/user_path.h: no link is
// followed, and no other user's file used, in a directory others can
// write, so a planted link cannot swap a host disk or another file in.
//
// open() checks what a user can get wrong and says how to fix it (no such
// file, no permission, a read-only file without ro=on, a size that is not
// a whole number of 512-byte sectors), then locks the image: an exclusive
// flock for read-write, a shared one for read-only, so two VMMs never
// write one image (nor one writes while others read). A refused lock names
// the holder's PID (from /proc/locks).
//
// What the image can do is probed at open, never guessed:
//  - discard: fallocate(PUNCH_HOLE) past the end of a regular file (a
//    no-op where it works, EOPNOTSUPP where the file system refuses it);
//  - write_zeroes: fallocate(ZERO_RANGE) likewise, its block punched again;
//  - cache=none (O_DIRECT): the file's direct-I/O alignment (statx
//    STATX_DIOALIGN where the kernel has it, else 512). The device offers
//    it as the guest's logical block size (VIRTIO_BLK_F_BLK_SIZE) and
//    refuses requests whose offset or length is not a multiple of it;
//    guest buffers go through an aligned bounce buffer, as guest RAM
//    addresses need not be aligned.
// Block devices get neither discard nor write_zeroes (not probed: a probe
// past the end of a device is refused either way).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/block/disk_options.h"

namespace kvmmio::block {

class KVMMIO_EXPORT DiskImage {
 public:
  // Throws UserError (starting with the disk as its configurer names it,
  // DiskOptions::words: "--disk PATH" in the kvmmio program) naming the
  // fix.
  static DiskImage open(const DiskOptions& options);

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  uint64_t size_bytes() const { return size_; }
  uint64_t capacity_sectors() const { return size_ / spec::kSectorSize; }
  bool read_only() const { return read_only_; }
  bool direct() const { return direct_; }
  // The offset and length alignment requests must have (512, or the
  // O_DIRECT alignment).
  uint32_t alignment() const { return alignment_; }
  bool can_discard() const { return discard_; }
  bool can_write_zeroes() const { return write_zeroes_; }
  bool block_device() const { return block_device_; }
  // The words messages about the image use (DiskOptions::words).
  const SettingWords& words() const { return words_of(words_); }

 private:
  DiskImage() = default;

  UniqueFd fd_;
  std::string path_;
  std::shared_ptr<const SettingWords> words_;
  uint64_t size_ = 0;
  bool read_only_ = false;
  bool direct_ = false;
  uint32_t alignment_ = spec::kSectorSize;
  bool discard_ = false;
  bool write_zeroes_ = false;
  bool block_device_ = false;
};

// Takes the image lock on `fd` (exclusive unless `shared`), without
// waiting. Throws UserError naming `path` (in `words`), the holder's PID
// where /proc/locks tells it, and the fix.
KVMMIO_EXPORT void lock_image(int fd, const std::string& path, bool shared,
                              const SettingWords& words = struct_words());

}  // namespace kvmmio::block
