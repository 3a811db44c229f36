// SPDX-License-Identifier: BSD-2-Clause
// Listening unix sockets (see the header).
#include "vmm/process/unix_socket.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/user_path.h"
#include "vmm/process/usage_error.h"

namespace kvmmio::vmm {
namespace {

// The socket's name inside the private directory: short, so the path
// bound (DIR/.kvmmio-XXXXXX/s) is at most 17 bytes longer than DIR.
constexpr char kSocketName[] = "s";
constexpr char kPrivateDirTemplate[] = ".kvmmio-XXXXXX";
constexpr char kOwnDirFix[] = "choose a path in a directory only you can write, e.g. /run/kvmmio";

// umask is process-wide: set only around the one mkdir or bind it is for,
// while kvmmio is still setting up. Another thread creating a file
// meanwhile would get a stricter mode, never a looser one.
class UmaskScope {
 public:
  explicit UmaskScope(mode_t mask) : old_(::umask(mask)) {}
  ~UmaskScope() { ::umask(old_); }
  UmaskScope(const UmaskScope&) = delete;
  UmaskScope& operator=(const UmaskScope&) = delete;

 private:
  mode_t old_;
};

std::string errno_text() { return std::strerror(errno); }

}  // namespace

void check_unix_socket_path(const std::string& path, const std::string& shown) {
  if (path.empty()) throw UsageError(shown + ": needs a path, e.g. /run/kvmmio/vm0.sock");
  if (path.size() > kMaxUnixSocketPath)
    throw UsageError(shown + ": the socket path is " + std::to_string(path.size()) +
                     " bytes; a unix socket path has at most " + std::to_string(kMaxUnixSocketPath) +
                     ": choose a shorter one (e.g. in /run or /tmp)");
}

sockaddr_un unix_socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // The length was checked when the option was parsed; cut, never overrun.
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size(), kMaxUnixSocketPath));
  return addr;
}

UniqueFd connect_unix_socket(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fd;
  const sockaddr_un addr = unix_socket_address(path);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    fd.reset();
    errno = err;
  }
  return fd;
}

UniqueFd connect_user_socket(const std::string& path, const std::string& shown, const std::string& fix) {
  const FoundFile found = find_user_file(path, shown);
  if (!found.exists())
    throw UserError(shown + ": " + path + ": " + std::strerror(found.error) +
                    (found.error == ENOENT ? "; " + fix : std::string()));
  if (!S_ISSOCK(found.st.st_mode))
    throw UserError(shown + ": " + path + " is " + file_kind(found.st.st_mode) + ", not a unix socket; " + fix);
  // Non-blocking: a listener whose backlog is full (a stuck or hostile
  // backend) refuses at once instead of holding the start-up.
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) throw_errno("socket for " + shown);
  // The socket by the file the walk found: the kernel follows this one
  // link, to that inode, whatever the path leads to now.
  const sockaddr_un addr = unix_socket_address("/proc/self/fd/" + std::to_string(found.probe.get()));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    throw UserError(shown + ": cannot connect to " + path + ": " + std::strerror(err) +
                    (err == ECONNREFUSED ? " (nothing listens on it); " + fix
                     : err == EAGAIN     ? " (its listener takes no more connections: is the backend stuck, or "
                                           "serving another VM?)"
                     : err == ENOENT     ? " (is /proc mounted?)"
                                         : std::string()));
  }
  return fd;
}

UnixListener::PrivateDir::~PrivateDir() {
  if (!fd) return;
  ::unlinkat(fd.get(), kSocketName, 0);
  ::unlinkat(parent, name.c_str(), AT_REMOVEDIR);
}

UnixListener::UnixListener(std::string path, std::string shown, int backlog)
    : path_(std::move(path)), shown_(std::move(shown)), euid_(::geteuid()) {
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
  // PATH's directory as PATH spells it, with its slash ("" for a bare name).
  const std::string prefix = slash == std::string::npos ? std::string() : path_.substr(0, slash + 1);
  name_ = path_.substr(prefix.size());
  if (name_.empty() || name_ == "." || name_ == "..")
    throw UserError(shown_ + ": " + path_ + " names a directory; give the socket's own path, e.g. " + prefix +
                    "vm0.sock");
  // Every later step is relative to this fd: PATH's directory as it is now.
  dir_.reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir_)
    throw UserError(shown_ + ": cannot create " + path_ + ": its directory " + dir + ": " + errno_text() +
                    " (create it first, e.g. mkdir -m 0700 " + dir + ")");
  inspect(/*judge_stale=*/false);  // a taken PATH is refused before anything is made

  const std::string bound = prefix + kPrivateDirTemplate + "/" + kSocketName;
  if (bound.size() > kMaxUnixSocketPath)
    throw UserError(shown_ + ": kvmmio makes the socket in a private directory next to " + path_ + " first, as " +
                    bound + ", " + std::to_string(bound.size()) + " bytes; a unix socket path has at most " +
                    std::to_string(kMaxUnixSocketPath) + ": choose a path in a shorter directory");
  make_private_dir(prefix);
  fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd_) throw_errno(shown_ + ": socket");
  const sockaddr_un addr = unix_socket_address(prefix + private_.name + "/" + kSocketName);
  {
    // Born 0600: no chmod by path afterwards.
    UmaskScope umask(0177);
    if (::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
      throw UserError(shown_ + ": cannot create a socket in " + dir + ": " + errno_text() +
                      " (is the directory writable?)");
  }
  // The bind went by path: make sure it landed in the directory we made.
  struct stat st {};
  if (::fstatat(private_.fd.get(), kSocketName, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode))
    throw UserError(shown_ + ": the private directory kvmmio made in " + dir +
                    " was replaced while it was used: another user can write there; " + kOwnDirFix);
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  if (::listen(fd_.get(), backlog) != 0) throw_errno(shown_ + ": listen");
}

UnixListener::~UnixListener() {
  if (!published_) return;  // private_ removes itself
  // Only our own socket: PATH may have been replaced since (by its user,
  // or by whoever can write the directory).
  struct stat st {};
  if (::fstatat(dir_.get(), name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev_ &&
      st.st_ino == ino_)
    ::unlinkat(dir_.get(), name_.c_str(), 0);
}

void UnixListener::make_private_dir(const std::string& prefix) {
  std::string tmpl = prefix + kPrivateDirTemplate;
  {
    UmaskScope umask(0077);  // mkdtemp's 0700, whatever the umask
    if (!::mkdtemp(tmpl.data()))
      throw UserError(shown_ + ": cannot create a directory next to " + path_ + ": " + errno_text() +
                      " (is its directory writable?)");
  }
  private_.parent = dir_.get();
  private_.name = tmpl.substr(tmpl.size() - (sizeof kPrivateDirTemplate - 1));
  private_.fd.reset(::openat(dir_.get(), private_.name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!private_.fd || ::fstat(private_.fd.get(), &st) != 0 || st.st_uid != euid_ || (st.st_mode & 07777) != 0700) {
    private_.fd.reset();  // not ours to remove
    throw UserError(shown_ + ": the private directory kvmmio made next to " + path_ +
                    " was replaced at once: another user can write there; " + kOwnDirFix);
  }
}

bool UnixListener::trusted(uid_t uid) const { return uid == 0 || uid == euid_ || (user_ && uid == *user_); }

UnixListener::AtPath UnixListener::inspect(bool judge_stale) {
  struct stat st {};
  if (::fstatat(dir_.get(), name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return AtPath::kNothing;
    throw UserError(shown_ + ": cannot look at " + path_ + ": " + errno_text());
  }
  if (!S_ISSOCK(st.st_mode))
    throw UserError(shown_ + ": " + path_ + " exists and is not a socket; choose another path");
  // Never blocks: a listener whose backlog is full answers EAGAIN at once
  // (a blocking connect would wait for it to accept, maybe forever).
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!probe) throw_errno(shown_ + ": socket");
  const sockaddr_un addr = unix_socket_address(path_);
  const int rc = ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS)
    throw UserError(shown_ + ": " + path_ +
                    " is in use (something listens on it, another kvmmio?); choose another path");
  if (errno == ENOENT) return AtPath::kNothing;  // gone meanwhile; the rename will not replace a newcomer
  if (errno != ECONNREFUSED)
    throw UserError(shown_ + ": cannot tell whether " + path_ + " is in use: " + errno_text() +
                    "; if nothing listens on it, remove it yourself");
  if (!judge_stale) return AtPath::kStale;
  // Replacing means removing what is at PATH: only if nobody but root,
  // kvmmio's user and --user's could have put it there.
  struct stat dir {};
  if (::fstat(dir_.get(), &dir) != 0) throw_errno(shown_ + ": fstat of " + path_ + "'s directory");
  std::string why;
  if (writable_by_others(dir))
    why = "in a directory other users can write";
  else if (!trusted(st.st_uid))
    why = "owned by uid " + std::to_string(st.st_uid);
  if (!why.empty())
    throw UserError(shown_ + ": " + path_ + " is a stale socket (nothing listens on it) " + why +
                    ", so kvmmio does not replace it: remove it yourself, or " + kOwnDirFix);
  return AtPath::kStale;
}

void UnixListener::give_to(uid_t uid, gid_t gid) {
  if (published_) throw std::logic_error("UnixListener::give_to after publish()");
  // In the private directory: nobody else can have put anything there.
  if (::fchownat(private_.fd.get(), kSocketName, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
    throw UserError(shown_ + ": cannot give " + path_ + " to --user/--group: " + errno_text());
  if (uid != static_cast<uid_t>(-1)) user_ = uid;
}

void UnixListener::publish() {
  if (published_) return;
  if (inspect(/*judge_stale=*/true) == AtPath::kStale && ::unlinkat(dir_.get(), name_.c_str(), 0) != 0 &&
      errno != ENOENT)
    throw UserError(shown_ + ": cannot remove the stale socket " + path_ + ": " + errno_text());
  if (::renameat2(private_.fd.get(), kSocketName, dir_.get(), name_.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST)
      throw UserError(shown_ + ": " + path_ + " was created meanwhile (another kvmmio?); choose another path");
    throw UserError(shown_ + ": cannot move the socket to " + path_ + ": " + errno_text() +
                    (errno == EINVAL ? " (the file system cannot rename without replacing)" : ""));
  }
  published_ = true;
  ::unlinkat(dir_.get(), private_.name.c_str(), AT_REMOVEDIR);
  private_.fd.reset();
}

UniqueFd UnixListener::accept(std::atomic<uint64_t>& refused) {
  UniqueFd client(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!client) return client;  // gone already, or out of fds: the next one may do
  ucred peer{};
  socklen_t len = sizeof peer;
  // Unknown counts as another user's: refused.
  const bool known = ::getsockopt(client.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && len == sizeof peer;
  if (known && trusted(peer.uid)) return client;
  ++refused;
  if (const uint64_t k = refused_log_.next()) {
    std::string allowed = "root";
    if (euid_ != 0) allowed += ", uid " + std::to_string(euid_) + " (kvmmio's)";
    if (user_) allowed += ", uid " + std::to_string(*user_) + " (--user)";
    const std::string who = known ? "uid " + std::to_string(peer.uid) : "an unknown user";
    KVMMIO_LOG_WARN("%s: a client of %s closed: only %s may connect (#%llu)", shown_.c_str(), who.c_str(),
                    allowed.c_str(), static_cast<unsigned long long>(k));
  }
  return {};
}

}  // namespace kvmmio::vmm
