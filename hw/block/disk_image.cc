// SPDX-License-Identifier: BSD-2-Clause
// DiskImage::open(): the checks, the lock and the probes (see the header).
#include "kvmmio/block/disk_image.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hw/block/disk_words.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/user_path.h"

namespace kvmmio::block {
namespace {

std::string named(const DiskOptions& o) { return disk_named(words_of(o.words), o.path); }

// Whether fallocate(mode) works on a block past the end of the file: KEEP_SIZE
// leaves the size as it is, so the probe changes nothing the guest sees.
bool fallocate_works(int fd, int mode, uint64_t size) {
  const auto at = static_cast<off_t>(size);
  if (::fallocate(fd, mode | FALLOC_FL_KEEP_SIZE, at, spec::kSectorSize) != 0) return false;
  // ZERO_RANGE may have allocated that block: give it back (best effort).
  if (!(mode & FALLOC_FL_PUNCH_HOLE))
    (void)::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, spec::kSectorSize);
  return true;
}

// The direct-I/O alignment of `fd`: STATX_DIOALIGN (Linux 6.1) where the
// kernel and libc know it, else the sector size.
uint32_t dio_alignment(int fd) {
#ifdef STATX_DIOALIGN
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN) &&
      stx.stx_dio_offset_align >= spec::kSectorSize && stx.stx_dio_offset_align <= 65536)
    return stx.stx_dio_offset_align;
#else
  (void)fd;
#endif
  return spec::kSectorSize;
}

// Refuses what is not an image before it is opened: a block device only
// with device=on, nothing else but a regular file.
void check_kind(const DiskOptions& o, const struct stat& st) {
  const std::string p = named(o);
  if (S_ISBLK(st.st_mode) && !o.block_device)
    throw UserError(p + ": a block device; kvmmio gives the guest a host disk only when told so: " +
                    disk_ask(words_of(o.words), DiskSetting::kBlockDevice, o.path) + ", or give a raw image file");
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
    throw UserError(p + ": " + file_kind(st.st_mode) +
                    ", not a regular file or a block device; give a raw image file");
}

// Opened by the rule of kvmmio/base/user_path.h: root gives the guest no
// file, and no host disk, through another user's link or file.
UniqueFd open_checked(const DiskOptions& o) {
  const std::string p = named(o);
  const FoundFile found = find_user_file(o.path, p);
  if (found.exists()) check_kind(o, found.st);
  int flags = o.read_only ? O_RDONLY : O_RDWR;
  if (o.cache == CacheMode::kNone) flags |= O_DIRECT;
  UniqueFd fd = open_found(found, p, flags);
  if (fd) return fd;
  const int err = errno;
  if (err == ENOENT)
    throw UserError(p + ": no such file; create a raw image, e.g. truncate -s 1G " + o.path);
  if ((err == EACCES || err == EPERM || err == EROFS) && !o.read_only && found.exists() &&
      ::faccessat(found.place.dir.get(), found.place.name.c_str(), R_OK, 0) == 0)
    throw UserError(p + ": the image is read-only here (" + std::strerror(err) +
                    "): " + disk_ask(words_of(o.words), DiskSetting::kReadOnly, o.path) +
                    " or make it writable for this user");
  if (err == EACCES || err == EPERM)
    throw UserError(p + ": no permission to open it (" + std::strerror(err) +
                    "): run kvmmio as a user who may read" + (o.read_only ? "" : " and write") +
                    " it, or change its owner or mode");
  if (err == EINVAL && o.cache == CacheMode::kNone)
    throw UserError(p + ": its file system refuses O_DIRECT: " +
                    disk_ask(words_of(o.words), DiskSetting::kCacheWriteback, o.path));
  throw UserError(p + ": cannot open it: " + std::strerror(err));
}

}  // namespace

DiskImage DiskImage::open(const DiskOptions& o) {
  DiskImage d;
  d.path_ = o.path;
  d.words_ = o.words;
  d.read_only_ = o.read_only;
  d.direct_ = o.cache == CacheMode::kNone;
  d.fd_ = open_checked(o);
  const std::string p = named(o);
  struct stat st {};
  if (::fstat(d.fd(), &st) != 0) throw UserError(p + ": cannot stat it: " + std::strerror(errno));
  if (S_ISBLK(st.st_mode)) {
    d.block_device_ = true;
    uint64_t bytes = 0;
    if (::ioctl(d.fd(), BLKGETSIZE64, &bytes) != 0)
      throw UserError(p + ": cannot read the block device's size: " + std::strerror(errno));
    d.size_ = bytes;
  } else {  // a regular file (open_checked() took nothing else)
    d.size_ = static_cast<uint64_t>(st.st_size);
  }
  if (d.size_ == 0)
    throw UserError(p + ": the image is empty; give it a size, e.g. truncate -s 1G " + o.path);
  if (d.size_ % spec::kSectorSize != 0)
    throw UserError(p + ": its size, " + std::to_string(d.size_) +
                    " bytes, is not a multiple of 512 (a disk is whole sectors): e.g. truncate -s " +
                    std::to_string((d.size_ / spec::kSectorSize + 1) * spec::kSectorSize) + " " + o.path);
  lock_image(d.fd(), o.path, o.read_only, words_of(o.words));
  if (d.direct_) d.alignment_ = dio_alignment(d.fd());
  if (!d.read_only_ && !d.block_device_) {
    d.discard_ = fallocate_works(d.fd(), FALLOC_FL_PUNCH_HOLE, d.size_);
    d.write_zeroes_ = fallocate_works(d.fd(), FALLOC_FL_ZERO_RANGE, d.size_);
  }
  return d;
}

}  // namespace kvmmio::block
