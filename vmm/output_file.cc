// Output files opened early, written late (see output_file.h).
#include "vmm/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmmio/error.h"

namespace kvmmio::vmm {

OutputFile::OutputFile(const std::string& path, const std::string& option) : path_(path) {
  fd_ = UniqueFd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd_) {
    created_ = true;
    return;
  }
  if (errno == EEXIST) fd_ = UniqueFd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd_)
    throw UserError(option + " " + path + ": cannot write: " + std::strerror(errno) +
                    "; give a path in a writable directory");
}

OutputFile::~OutputFile() {
  if (created_ && !written_) ::unlink(path_.c_str());
}

void OutputFile::write(std::span<const uint8_t> content) {
  // A regular file is truncated; a pipe or terminal (--stats /dev/stdout)
  // is simply written to.
  struct stat st {};
  if (::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd_.get(), 0) != 0)
    throw_errno("truncate " + path_);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t r = ::write(fd_.get(), content.data() + done, content.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_errno("write " + path_);
    done += static_cast<size_t>(r);
  }
  written_ = true;
}

}  // namespace kvmmio::vmm
