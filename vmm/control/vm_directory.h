// SPDX-License-Identifier: BSD-2-Clause
// Named VMs (`kvmmio run --name NAME`): each has a runtime directory,
// BASE/NAME, holding its control socket (api.sock), its console socket
// when the console goes to one (console.sock) and its pidfile (pid), so
// `kvmmio list`, `stop`, `console` and `ctl` find a VM by its name alone.
//
// BASE is /run/kvmmio for root and $XDG_RUNTIME_DIR/kvmmio for another
// user; $KVMMIO_RUNTIME_DIR replaces it (tests, a second set of VMs).
// kvmmio creates BASE (mode 0700) when it is missing and refuses a BASE
// that is not a directory of its own user's that no other user can write:
// everything in it is then only root's (or that user's) to change, which
// is what lets the sockets' stale-file rules (unix_socket.h) and the
// pidfile be trusted.
//
// The pidfile is the VM's lock: its kvmmio holds an exclusive flock(2) on
// it for its whole life, and the kernel drops that lock however the
// process ends. So a second VM of the same name is refused while the
// first runs, a directory left by a killed kvmmio is taken over, and
// `list` and `stop` tell a running VM from a dead one by the lock, not by
// a PID that may have been reused.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {

// A name: 1-32 of letters, digits, '-', '_' and '.', starting with a
// letter or digit. UsageError starting with `shown` otherwise.
void check_vm_name(const std::string& name, const std::string& shown);

// BASE as above; UsageError naming the fix when there is none (not root,
// no $XDG_RUNTIME_DIR).
std::string runtime_base();

// BASE/NAME/FILE for a name already checked.
std::string vm_file(const std::string& name, const char* file);
inline constexpr char kApiSocketFile[] = "api.sock";
inline constexpr char kConsoleSocketFile[] = "console.sock";
inline constexpr char kPidFile[] = "pid";

// The directory of a running named VM: made (or taken over from a dead
// one) by the constructor, removed by the destructor. Declared before the
// sockets in it, so that they are gone first.
class VmDirectory {
 public:
  // UsageError naming the fix: a bad BASE, a VM of that name that runs
  // (with its PID), a directory that cannot be made.
  explicit VmDirectory(std::string name);
  ~VmDirectory();
  VmDirectory(const VmDirectory&) = delete;
  VmDirectory& operator=(const VmDirectory&) = delete;

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  std::string file(const char* name) const { return path_ + "/" + name; }
  // For --user/--group: the directory and pidfile become theirs, so the
  // dropped kvmmio can remove them at exit.
  void give_to(uid_t uid, gid_t gid);

 private:
  std::string name_, path_;
  UniqueFd base_;  // BASE, O_PATH
  UniqueFd dir_;   // BASE/NAME, O_PATH
  UniqueFd pid_;   // the pidfile, locked
};

// The names of BASE's directories, sorted (an absent BASE: none).
std::vector<std::string> vm_names();

// The PID of the kvmmio that runs NAME, if one does (its pidfile locked).
std::optional<pid_t> running_vm_pid(const std::string& name);

// Holds NAME's pidfile open (never locking it) to learn when its kvmmio
// has exited: exited() is true once the lock is free, however it ended.
class VmExitWatch {
 public:
  // False from valid() when NAME has no pidfile.
  explicit VmExitWatch(const std::string& name);
  bool valid() const { return static_cast<bool>(pid_); }
  bool exited() const;

 private:
  UniqueFd pid_;
};

}  // namespace kvmmio::vmm
