// SPDX-License-Identifier: BSD-2-Clause
// Output files opened early, written late (see output_file.h).
#include "vmm/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"

namespace kvmmio::vmm {

OutputFile::OutputFile(const std::string& path, const std::string& option)
    : path_(path), option_(option) {
  if (path == "-") {  // standard output: written to in place, never removed
    fd_ = UniqueFd(::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3));
    if (!fd_) fail("cannot use standard output");
    return;
  }
  fd_ = UniqueFd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd_) {
    created_ = true;
    regular_ = true;
    return;
  }
  if (errno == EEXIST) fd_ = UniqueFd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd_)
    throw UserError(option + " " + path + ": cannot write: " + std::strerror(errno) +
                    "; give a path in a writable directory");
  struct stat st {};
  regular_ = ::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode);
}

OutputFile::~OutputFile() {
  if (created_ && !written_) ::unlink(path_.c_str());
}

void OutputFile::fail(const std::string& what) const {
  throw UserError(option_ + " " + path_ + ": " + what + ": " + std::strerror(errno));
}

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

}  // namespace

void OutputFile::write(std::span<const uint8_t> content) {
  if (!regular_) {  // a pipe, a terminal, standard output: simply written to
    if (!write_all(fd_.get(), content)) fail("cannot write");
    written_ = true;
    return;
  }
  const std::string tmp = path_ + ".kvmmio-tmp";
  UniqueFd out(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out) {
    // A writable file in a directory we cannot create files in.
    if (errno != EACCES && errno != EPERM && errno != EROFS) fail("cannot create " + tmp);
    return write_in_place(content);
  }
  if (!write_all(out.get(), content)) {
    const int err = errno;
    ::unlink(tmp.c_str());
    errno = err;
    fail("cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    // A file we may not replace (another user's in a sticky directory such
    // as /tmp, after --user dropped the identity that made it): its fd,
    // opened at the start, still writes.
    if (err == EPERM || err == EACCES) return write_in_place(content);
    errno = err;
    fail("cannot rename " + tmp + " over it");
  }
  written_ = true;
}

// Replaces the content through the fd opened at the start (a reader may
// then see a partial document).
void OutputFile::write_in_place(std::span<const uint8_t> content) {
  if (::ftruncate(fd_.get(), 0) != 0) fail("cannot truncate");
  if (::lseek(fd_.get(), 0, SEEK_SET) < 0) fail("cannot seek");
  if (!write_all(fd_.get(), content)) fail("cannot write");
  written_ = true;
}

}  // namespace kvmmio::vmm
