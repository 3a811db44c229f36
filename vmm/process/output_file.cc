// SPDX-License-Identifier: BSD-2-Clause
// Output files opened early, written late (see output_file.h).
#include "vmm/process/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"

namespace kvmmio::vmm {
namespace {

// false with errno set on failure.
bool write_all(int fd, std::span<const uint8_t> content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t r = ::write(fd, content.data() + done, content.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const std::string& option)
    : path_(path), option_(option) {
  if (path == "-") {  // standard output: written to in place, never removed
    fd_ = UniqueFd(::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3));
    if (!fd_) fail("cannot use standard output");
    return;
  }
  PathPlace place = find_user_path(path, option + " " + path);
  fd_ = create_in_place(place, O_WRONLY, 0644);
  if (fd_) {
    created_ = regular_ = in_place_ = true;
    place_ = std::move(place);
    return;
  }
  if (errno != EEXIST) fail_to_open();
  open_existing(std::move(place));
}

void OutputFile::open_existing(PathPlace place) {
  const std::string shown = option_ + " " + path_;
  FoundFile found = find_in_place(std::move(place), shown);
  const mode_t mode = found.st.st_mode;
  if (found.exists() && !S_ISREG(mode) && !S_ISCHR(mode) && !S_ISFIFO(mode))
    throw UserError(shown + ": " + file_kind(mode) + ", not a file to write; give a file's path");
  fd_ = open_found(found, shown, O_WRONLY);
  if (!fd_) fail_to_open();
  // Through /proc/self/fd (/dev/stdout): an open file, not a name to
  // rename over; written in place as "-" is.
  regular_ = S_ISREG(mode) && !found.place.magic_link;
  // Never in place into another user's file (that would write as root
  // what the --user may not), only replaced.
  in_place_ = !regular_ || owner_allowed(found.st.st_uid);
  place_ = std::move(found.place);
}

OutputFile::~OutputFile() {
  if (!created_ || written_) return;
  // Only the file made here: in a directory others can write, the name
  // may lead to another file by now.
  struct stat mine {}, there {};
  if (::fstat(fd_.get(), &mine) == 0 &&
      ::fstatat(place_.dir.get(), place_.name.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0 &&
      same_file(mine, there))
    ::unlinkat(place_.dir.get(), place_.name.c_str(), 0);
}

void OutputFile::fail(const std::string& what) const {
  throw UserError(option_ + " " + path_ + ": " + what + ": " + std::strerror(errno));
}

void OutputFile::fail_to_open() const {
  const int err = errno;
  throw UserError(option_ + " " + path_ + ": cannot write: " + std::strerror(err) +
                  (err == ENXIO ? "; a FIFO needs its reader first"
                                : "; give a path in a writable directory"));
}

void OutputFile::write(std::span<const uint8_t> content) {
  if (!regular_) {  // a pipe, a terminal, standard output: simply written to
    if (!write_all(fd_.get(), content)) fail("cannot write");
    written_ = true;
    return;
  }
  if (!replace(content)) {
    if (!in_place_) fail("cannot replace it, and kvmmio writes in place only root's or --user's files");
    write_in_place(content);
  }
  written_ = true;
}

// A temporary file beside it, renamed over it. false (errno set) where
// the directory takes no new file or the file may not be replaced (another
// user's in a sticky directory such as /tmp, after --user dropped the
// identity that made it).
bool OutputFile::replace(std::span<const uint8_t> content) {
  std::string tmp;
  UniqueFd out = create_temporary(place_, 0644, tmp);
  if (!out) {
    if (errno == EACCES || errno == EPERM || errno == EROFS) return false;
    fail("cannot create a temporary file in " + place_.dir_path);
  }
  const auto drop_tmp = [&] {
    const int err = errno;
    ::unlinkat(place_.dir.get(), tmp.c_str(), 0);
    errno = err;
  };
  if (!write_all(out.get(), content)) {
    drop_tmp();
    fail("cannot write " + place_.dir_path + "/" + tmp);
  }
  if (::renameat(place_.dir.get(), tmp.c_str(), place_.dir.get(), place_.name.c_str()) != 0) {
    drop_tmp();
    if (errno == EPERM || errno == EACCES) return false;
    fail("cannot rename " + place_.dir_path + "/" + tmp + " over it");
  }
  // The file at the name is now this one: a later write in place goes to
  // it, not to the one it replaced.
  fd_ = std::move(out);
  in_place_ = true;
  return true;
}

// Replaces the content through the fd opened at the start (a reader may
// then see a partial document).
void OutputFile::write_in_place(std::span<const uint8_t> content) {
  if (::ftruncate(fd_.get(), 0) != 0) fail("cannot truncate");
  if (::lseek(fd_.get(), 0, SEEK_SET) < 0) fail("cannot seek");
  if (!write_all(fd_.get(), content)) fail("cannot write");
}

}  // namespace kvmmio::vmm
