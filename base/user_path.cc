// SPDX-License-Identifier: BSD-2-Clause
// The walk of a user-given path by the rule of user_path.h: who may own
// what, and which links are followed.
#include "kvmmio/base/user_path.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <deque>
#include <vector>

#include "kvmmio/base/error.h"
#include "user_path_rule.h"

namespace kvmmio {

namespace user_path_rule {
namespace {

// "in /tmp/d, a directory..." or "in /tmp/d/e, below /tmp, a directory...":
// the place, and the directory from which on the rule trusts nothing.
std::string untrusted_place(const std::string& dir, const std::string& untrusted_at) {
  return "in " + dir + (dir == untrusted_at ? "" : ", below " + untrusted_at) +
         ", a directory other users can write";
}

}  // namespace

void refuse_link(const std::string& shown, const std::string& name, const std::string& dir,
                 const std::string& untrusted_at) {
  throw UserError(shown + ": " + name + " is a symbolic link " + untrusted_place(dir, untrusted_at) +
                  "; kvmmio follows no links there: give the file's own path");
}

void refuse_owner(const std::string& shown, uid_t uid, const std::string& dir,
                  const std::string& untrusted_at) {
  throw UserError(shown + ": owned by uid " + std::to_string(uid) + ", " +
                  untrusted_place(dir, untrusted_at) +
                  "; kvmmio uses files there only when root or the user it runs as owns them: "
                  "give a file of yours, or move it to a directory only you can write");
}

}  // namespace user_path_rule

namespace {

std::atomic<uid_t> g_trusted_owner{static_cast<uid_t>(-1)};

std::string joined(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// The components of `path`, without empty ones and ".".
std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string c = path.substr(start, end - start);
    if (!c.empty() && c != ".") out.push_back(std::move(c));
    start = end + 1;
  }
  return out;
}

// A directory reached so far.
struct Step {
  UniqueFd fd;
  std::string path;
  std::string untrusted_at;  // as in PathPlace
  dev_t dev = 0;             // its file system's, to see a mount's root
};

bool on_procfs(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

std::string read_link(int link_fd) {
  std::vector<char> buf(PATH_MAX + 1);
  const ssize_t n = ::readlinkat(link_fd, "", buf.data(), buf.size());
  if (n < 0 || static_cast<size_t>(n) >= buf.size()) return {};
  return std::string(buf.data(), static_cast<size_t>(n));
}

class Walk {
 public:
  Walk(const std::string& path, const std::string& shown) : shown_(shown) {
    std::string absolute = path;
    if (path.empty() || path[0] != '/') {
      std::vector<char> cwd(PATH_MAX);
      if (!::getcwd(cwd.data(), cwd.size())) {
        error_ = errno;
        return;
      }
      absolute = std::string(cwd.data()) + "/" + path;
    }
    todo_ = components(absolute);
    push_root();
  }

  PathPlace run() {
    PathPlace place;
    while (!error_ && !todo_.empty()) {
      std::string name = std::move(todo_.front());
      todo_.pop_front();
      if (name == "..") {
        if (steps_.size() > 1) steps_.pop_back();
        continue;
      }
      if (todo_.empty()) return last(std::move(name));
      enter(name);
    }
    // "/", "a/..": a directory, not a file in one.
    place.error = error_ ? error_ : EISDIR;
    return place;
  }

 private:
  void push_root() {
    Step root{UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)), "/", ""};
    struct stat st {};
    if (!root.fd || ::fstat(root.fd.get(), &st) != 0) {
      error_ = errno;
      return;
    }
    if (writable_by_others(st)) root.untrusted_at = "/";
    root.dev = st.st_dev;
    steps_.clear();
    steps_.push_back(std::move(root));
  }

  // Opens `name` in the current directory without following it.
  UniqueFd look(const std::string& name, struct stat& st) {
    UniqueFd fd(::openat(steps_.back().fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (fd && ::fstat(fd.get(), &st) != 0) fd.reset();
    return fd;
  }

  // Follows the link `name` (open as `fd`) of the current directory, or
  // refuses it by the rule.
  void follow(const std::string& name, const UniqueFd& fd) {
    const Step& here = steps_.back();
    if (!here.untrusted_at.empty())
      user_path_rule::refuse_link(shown_, name, here.path, here.untrusted_at);
    if (++links_ > PathPlace::kMaxLinks) {
      error_ = ELOOP;
      return;
    }
    const std::string target = read_link(fd.get());
    if (target.empty()) {
      error_ = errno ? errno : ENAMETOOLONG;
      return;
    }
    if (target[0] == '/') push_root();
    std::deque<std::string> spliced = components(target);
    todo_.insert(todo_.begin(), spliced.begin(), spliced.end());
  }

  void enter(const std::string& name) {
    struct stat st {};
    UniqueFd fd = look(name, st);
    if (!fd) {
      error_ = errno;
      return;
    }
    if (S_ISLNK(st.st_mode)) return follow(name, fd);
    if (!S_ISDIR(st.st_mode)) {
      error_ = ENOTDIR;
      return;
    }
    const Step& here = steps_.back();
    Step next{std::move(fd), joined(here.path, name), here.untrusted_at, st.st_dev};
    // A mount's root (another file system than its parent's: /proc, /dev,
    // /run) cannot be renamed or removed by whoever may write the directory
    // it is mounted on (EBUSY), so trust starts anew there: an initramfs
    // whose "/" everyone may write still has a /proc and a /dev of root's.
    if (st.st_dev != here.dev) next.untrusted_at.clear();
    if (next.untrusted_at.empty() && writable_by_others(st)) next.untrusted_at = next.path;
    steps_.push_back(std::move(next));
  }

  PathPlace last(std::string name) {
    struct stat st {};
    const UniqueFd fd = look(name, st);
    if (fd && S_ISLNK(st.st_mode)) {
      const Step& here = steps_.back();
      if (!(here.untrusted_at.empty() && on_procfs(here.fd.get()))) {
        follow(name, fd);
        return run();
      }
    }
    PathPlace place;
    Step& here = steps_.back();
    place.magic_link = fd && S_ISLNK(st.st_mode);
    place.dir = std::move(here.fd);
    place.dir_path = here.path;
    place.untrusted_at = here.untrusted_at;
    place.name = std::move(name);
    return place;
  }

  const std::string& shown_;
  std::vector<Step> steps_;
  std::deque<std::string> todo_;
  int links_ = 0;
  int error_ = 0;
};

}  // namespace

void trust_path_owner(uid_t uid) { g_trusted_owner = uid; }
uid_t trusted_path_owner() { return g_trusted_owner; }

bool owner_allowed(uid_t uid) {
  return uid == 0 || uid == ::geteuid() ||
         (uid == g_trusted_owner && uid != static_cast<uid_t>(-1));
}

bool writable_by_others(const struct stat& st) {
  return !owner_allowed(st.st_uid) || ((st.st_mode & S_IWGRP) && st.st_gid != 0) ||
         (st.st_mode & S_IWOTH);
}

std::string PathPlace::full_path() const { return joined(dir_path, name); }

PathPlace find_user_path(const std::string& path, const std::string& shown) {
  return Walk(path, shown).run();
}

}  // namespace kvmmio
