// SPDX-License-Identifier: BSD-2-Clause
// Looking at, opening and creating the file at the end of a user path
// (user_path.h): the owner check, the open that cannot block, and new
// files that are never an existing one.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "kvmmio/base/error.h"
#include "kvmmio/base/user_path.h"
#include "user_path_rule.h"

namespace kvmmio {
namespace {

// Links in a trusted place were followed by the walk, so a link here was
// planted (or swapped in since) where the rule refuses it.
[[noreturn]] void refuse_link(const PathPlace& place, const std::string& shown) {
  user_path_rule::refuse_link(shown, place.name, place.dir_path, place.untrusted_at);
}

int nofollow(const PathPlace& place) { return place.magic_link ? 0 : O_NOFOLLOW; }

}  // namespace

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a symbolic link";
}

FoundFile find_in_place(PathPlace place, const std::string& shown) {
  FoundFile found;
  found.place = std::move(place);
  const PathPlace& p = found.place;
  if (p.error) {
    found.error = p.error;
    return found;
  }
  found.probe.reset(::openat(p.dir.get(), p.name.c_str(), O_PATH | O_CLOEXEC | nofollow(p)));
  if (!found.probe || ::fstat(found.probe.get(), &found.st) != 0) {
    found.error = errno;
    return found;
  }
  if (S_ISLNK(found.st.st_mode)) {
    if (!p.trusted()) refuse_link(p, shown);
    found.error = ELOOP;  // made a link since the walk followed its trusted place
    return found;
  }
  if (!p.trusted() && !owner_allowed(found.st.st_uid))
    user_path_rule::refuse_owner(shown, found.st.st_uid, p.dir_path, p.untrusted_at);
  return found;
}

FoundFile find_user_file(const std::string& path, const std::string& shown) {
  return find_in_place(find_user_path(path, shown), shown);
}

UniqueFd open_found(const FoundFile& found, const std::string& shown, int flags) {
  if (!found.exists()) {
    errno = found.error;
    return {};
  }
  const PathPlace& p = found.place;
  UniqueFd fd(::openat(p.dir.get(), p.name.c_str(),
                       flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | nofollow(p)));
  if (!fd) {
    if (errno == ELOOP && !p.trusted() && !p.magic_link) refuse_link(p, shown);
    return {};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return {};
  if (st.st_dev != found.st.st_dev || st.st_ino != found.st.st_ino)
    throw UserError(shown + ": the file changed while kvmmio opened it (another user replaced " +
                    p.full_path() + "?): check it and try again");
  // O_NONBLOCK was for the open (a FIFO must not block it); the caller's
  // reads and writes block unless it asked otherwise.
  if (!(flags & O_NONBLOCK)) {
    const int now = ::fcntl(fd.get(), F_GETFL);
    if (now < 0 || ::fcntl(fd.get(), F_SETFL, now & ~O_NONBLOCK) != 0) return {};
  }
  return fd;
}

UniqueFd create_in_place(const PathPlace& place, int flags, mode_t mode) {
  if (place.error) {
    errno = place.error;
    return {};
  }
  return UniqueFd(::openat(place.dir.get(), place.name.c_str(),
                           flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
}

UniqueFd create_temporary(const PathPlace& place, mode_t mode, std::string& name) {
  // Never a name another user can guess in advance: with O_EXCL a guessed
  // one would only make kvmmio fail, but it should not fail either.
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint64_t r = 0;
    if (::getrandom(&r, sizeof r, 0) != sizeof r) return {};
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".kvmmio-%016llx", static_cast<unsigned long long>(r));
    name = "." + place.name + suffix;
    UniqueFd fd(::openat(place.dir.get(), name.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (fd || errno != EEXIST) return fd;
  }
  return {};
}

}  // namespace kvmmio
