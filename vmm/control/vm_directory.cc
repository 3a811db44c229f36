// SPDX-License-Identifier: BSD-2-Clause
// Named VMs' runtime directories (see the header).
#include "vmm/control/vm_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "vmm/process/usage_error.h"

namespace kvmmio::vmm {
namespace {

constexpr size_t kMaxNameLength = 32;

std::string errno_text() { return std::strerror(errno); }

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

// BASE, made if missing, and checked: a directory (not a link) of this
// user's that no other user can write.
UniqueFd open_base(const std::string& base) {
  if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST)
    throw UsageError("cannot create " + base + ", where named VMs keep their sockets: " + errno_text() +
                     (errno == ENOENT ? " (its parent is missing: for a user, is $XDG_RUNTIME_DIR set right?)"
                                      : " (run as root, or set KVMMIO_RUNTIME_DIR to a directory of yours)"));
  UniqueFd fd(::open(base.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd)
    throw UsageError(base + ", where named VMs keep their sockets, is not a directory (" + errno_text() +
                     "): remove it, or set KVMMIO_RUNTIME_DIR to another");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw UsageError(base + ": " + errno_text());
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    throw UsageError(base + ", where named VMs keep their sockets, is " +
                     (st.st_uid != ::geteuid() ? "another user's" : "writable by other users") +
                     ": anyone who can write there could take a VM's name; make it yours alone (chown, "
                     "chmod 0700) or set KVMMIO_RUNTIME_DIR to a directory of yours");
  return fd;
}

// The holder's PID as its pidfile says (0 when unreadable).
pid_t read_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  return static_cast<pid_t>(std::strtol(buf, nullptr, 10));
}

// Whether an exclusive lock is held on the file (by another open file).
bool locked(int fd) {
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

UniqueFd open_pidfile_read(const std::string& name) {
  return UniqueFd(::open(vm_file(name, kPidFile).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
}

}  // namespace

void check_vm_name(const std::string& name, const std::string& shown) {
  const bool ok = !name.empty() && name.size() <= kMaxNameLength && name_char(name[0]) && name[0] != '-' &&
                  name[0] != '_' && name[0] != '.' && std::all_of(name.begin(), name.end(), name_char);
  if (!ok)
    throw UsageError(shown + ": a VM's name is 1-" + std::to_string(kMaxNameLength) +
                     " letters, digits, '-', '_' and '.', starting with a letter or digit, e.g. vm0");
}

std::string runtime_base() {
  if (const char* dir = std::getenv("KVMMIO_RUNTIME_DIR"); dir && *dir) return dir;
  if (::geteuid() == 0) return "/run/kvmmio";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) return std::string(xdg) + "/kvmmio";
  throw UsageError(
      "named VMs keep their sockets in /run/kvmmio for root, or in $XDG_RUNTIME_DIR/kvmmio for other "
      "users, and $XDG_RUNTIME_DIR is not set: run as root, or set KVMMIO_RUNTIME_DIR to a directory of "
      "yours");
}

std::string vm_file(const std::string& name, const char* file) { return runtime_base() + "/" + name + "/" + file; }

VmDirectory::VmDirectory(std::string name) : name_(std::move(name)) {
  const std::string base = runtime_base();
  path_ = base + "/" + name_;
  base_ = open_base(base);
  const std::string shown = "--name " + name_;
  if (::mkdirat(base_.get(), name_.c_str(), 0700) != 0 && errno != EEXIST)
    throw UsageError(shown + ": cannot create " + path_ + ": " + errno_text());
  dir_.reset(::openat(base_.get(), name_.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_) throw UsageError(shown + ": " + path_ + " is not a directory: remove it");
  // O_PATH cannot be used to create a file: the directory once more, for that.
  UniqueFd dir(::openat(base_.get(), name_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) throw UsageError(shown + ": " + path_ + ": " + errno_text());
  pid_.reset(::openat(dir.get(), kPidFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!pid_)
    throw UsageError(shown + ": cannot create " + file(kPidFile) + ": " + errno_text() +
                     (errno == ENOENT ? " (a VM of that name was just stopping: try again)" : ""));
  if (::flock(pid_.get(), LOCK_EX | LOCK_NB) != 0) {
    const pid_t holder = read_pid(pid_.get());
    throw UsageError(shown + ": a VM of that name runs" +
                     (holder > 0 ? " (kvmmio, PID " + std::to_string(holder) + ")" : std::string()) +
                     ": stop it (kvmmio stop " + name_ + ") or choose another name");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(pid_.get(), 0) != 0 ||
      ::pwrite(pid_.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    throw UsageError(shown + ": cannot write " + file(kPidFile) + ": " + errno_text());
}

VmDirectory::~VmDirectory() {
  // Still holding the lock: a VM of this name starting now is refused
  // until the pidfile is gone, then makes its own.
  ::unlinkat(dir_.get(), kPidFile, 0);
  ::unlinkat(base_.get(), name_.c_str(), AT_REMOVEDIR);  // fails if not empty: left
}

void VmDirectory::give_to(uid_t uid, gid_t gid) {
  if (::fchownat(dir_.get(), "", uid, gid, AT_EMPTY_PATH) != 0 || ::fchown(pid_.get(), uid, gid) != 0)
    throw UsageError("--name " + name_ + ": cannot give " + path_ + " to --user/--group: " + errno_text());
}

std::vector<std::string> vm_names() {
  std::vector<std::string> names;
  DIR* d = ::opendir(runtime_base().c_str());
  if (!d) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == ".." || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)) continue;
    try {
      check_vm_name(n, n);
    } catch (const UsageError&) {
      continue;  // not a VM's: kvmmio never makes such a name
    }
    names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<pid_t> running_vm_pid(const std::string& name) {
  const UniqueFd fd = open_pidfile_read(name);
  if (!fd || !locked(fd.get())) return std::nullopt;
  return read_pid(fd.get());
}

VmExitWatch::VmExitWatch(const std::string& name) : pid_(open_pidfile_read(name)) {}

bool VmExitWatch::exited() const { return !pid_ || !locked(pid_.get()); }

}  // namespace kvmmio::vmm
