// SPDX-License-Identifier: BSD-2-Clause
// User paths: how kvmmio, often root, opens a path a user gave (--kernel,
// --initrd, --disk, --stats, --dump-dtb, --console ...,file=) without
// being steered by the machine's other users.
//
// The rule, as the kernel's protected_symlinks reasons: a directory is
// "writable by others" when someone besides root and the allowed users
// can write it (its owner is someone else, or it is group-writable with a
// group other than root's, or world-writable; sticky or not). The allowed
// users are root, the effective uid and the --user kvmmio becomes
// (trust_path_owner()). The path is walked from "/" one component at a
// time (O_PATH|O_NOFOLLOW), never by the kernel's own lookup; once a
// directory on the way is writable by others, everything below it is
// untrusted:
//  - a symbolic link in a trusted directory is followed (at most
//    kMaxLinks), so /vmlinuz, /dev/disk/by-id/... and /dev/stdout keep
//    working; one in an untrusted place is refused, since another user
//    may have planted it to point at /etc/shadow or /root/.bashrc;
//  - a file in an untrusted place is used only when an allowed user owns
//    it: another user's file (a FIFO, a log) is refused.
// Refusals by the rule throw UserError naming the path, the rule and the
// fix; refusals by the system (ENOENT, EACCES, ...) come back as errno,
// for each caller to word its own fix.
//
// Nothing is opened for I/O before it is checked: a file is looked at
// through an O_PATH fd (a FIFO or a device feels nothing), then opened
// with O_NONBLOCK (a FIFO without a reader fails at once with ENXIO) and
// checked to be the file looked at.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

// The --user kvmmio will become ((uid_t)-1: none), trusted as root is.
// Set once, before the user's files are opened.
KVMMIO_EXPORT void trust_path_owner(uid_t uid);
KVMMIO_EXPORT uid_t trusted_path_owner();
// Root, the effective uid or trusted_path_owner().
KVMMIO_EXPORT bool owner_allowed(uid_t uid);
// A directory (or file) someone besides those can write: its owner is not
// allowed, or a group other than root's or everyone may write. Sticky or
// not: a sticky directory stops others removing kvmmio's files, not
// planting theirs.
KVMMIO_EXPORT bool writable_by_others(const struct stat& st);

// Where a path's last component is: its directory, reached by the rule.
struct KVMMIO_EXPORT PathPlace {
  static constexpr int kMaxLinks = 40;

  UniqueFd dir;              // O_PATH; valid unless error
  std::string dir_path;      // as walked (links resolved), for messages
  std::string name;          // the last component ("" with error)
  std::string untrusted_at;  // the first directory writable by others ("": trusted)
  // `name` is a /proc link to an open file (/proc/self/fd/1, what
  // /dev/stdout leads to): opened through, as it names no path.
  bool magic_link = false;
  int error = 0;  // the system's refusal on the way (ENOENT, ENOTDIR, ELOOP, ...)

  bool trusted() const { return untrusted_at.empty(); }
  // "dir/name", for messages.
  std::string full_path() const;
};

// Walks `path` (relative: from the working directory) to its last
// component, following links where the rule allows. `shown` starts every
// message ("--disk /tmp/d.img"). Throws UserError for a link the rule
// refuses.
KVMMIO_EXPORT PathPlace find_user_path(const std::string& path, const std::string& shown);

// The file at a place, looked at and checked by the rule, not opened yet.
struct KVMMIO_EXPORT FoundFile {
  PathPlace place;
  UniqueFd probe;  // O_PATH
  struct stat st {};
  int error = 0;  // the system's refusal: no such file, no permission, ...

  bool exists() const { return error == 0; }
};

// Looks at the file at `place` (UserError: a link or another user's file
// where the rule refuses them).
KVMMIO_EXPORT FoundFile find_in_place(PathPlace place, const std::string& shown);
KVMMIO_EXPORT FoundFile find_user_file(const std::string& path, const std::string& shown);

// Opens a found file with `flags` (O_RDONLY, O_WRONLY|O_APPEND, ...; it
// adds O_CLOEXEC, O_NOCTTY and O_NOFOLLOW). O_NONBLOCK is kept only when
// `flags` has it. Invalid with errno set when the system refuses (or
// `found` does not exist); UserError when the file changed since it was
// looked at.
KVMMIO_EXPORT UniqueFd open_found(const FoundFile& found, const std::string& shown, int flags);

// A new file at `place`: O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file,
// never through a link). Invalid with errno set (EEXIST: there is one).
KVMMIO_EXPORT UniqueFd create_in_place(const PathPlace& place, int flags, mode_t mode);
// A new file beside place.name, with a random name (set in `name`), for
// replacing it by renameat() within place.dir.
KVMMIO_EXPORT UniqueFd create_temporary(const PathPlace& place, mode_t mode, std::string& name);

// "a FIFO", "a directory", ...: what a file is, for messages.
KVMMIO_EXPORT std::string file_kind(mode_t mode);

}  // namespace kvmmio
