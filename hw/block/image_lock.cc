// SPDX-License-Identifier: BSD-2-Clause
// The image lock (see kvmmio/block/disk_image.h): flock, and on refusal the
// holder looked up in /proc/locks, so the message names who has the image.
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "hw/block/disk_words.h"
#include "kvmmio/base/error.h"
#include "kvmmio/block/disk_image.h"

namespace kvmmio::block {
namespace {

// The PIDs /proc/locks lists for the file behind `fd`: its lines read
// "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END", with the device
// numbers in hex (fs/locks.c, lock_get_status()). Empty if unknown (no
// /proc, a lock held through another mount namespace's view, a race).
std::string holders(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  std::ifstream locks("/proc/locks");
  std::string line, found;
  std::set<std::string> seen;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string index, kind, mode, access, pid, where;
    if (!(in >> index >> kind)) continue;
    if (kind == "->") in >> kind;  // a waiter, shown under the lock it waits for
    // Only flock locks conflict with ours (POSIX and OFD locks are apart).
    if (kind != "FLOCK") continue;
    if (!(in >> mode >> access >> pid >> where)) continue;
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    if (std::sscanf(where.c_str(), "%x:%x:%llu", &maj, &min, &ino) != 3) continue;
    if (maj != major(st.st_dev) || min != minor(st.st_dev) || ino != st.st_ino) continue;
    if (!seen.insert(pid).second) continue;
    found += (found.empty() ? "" : ", ") + ("PID " + pid);
  }
  return found;
}

}  // namespace

void lock_image(int fd, const std::string& path, bool shared, const SettingWords& words) {
  for (;;) {
    if (::flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return;
    if (errno == EINTR) continue;
    break;
  }
  const int err = errno;
  const std::string p = disk_named(words, path);
  if (err != EWOULDBLOCK)
    throw UserError(p + ": cannot lock the image (" + std::strerror(err) +
                    "); kvmmio locks every image so two VMMs never write one");
  const std::string who = holders(fd);
  throw UserError(p + ": the image is in use by " + (who.empty() ? std::string("another process") : who) +
                  (shared ? " (it writes to it)" : "") + ": stop that VMM first" +
                  (shared ? "" : ", or " + disk_ask(words, DiskSetting::kReadOnly, path) +
                                     " in every VMM that shares the image"));
}

}  // namespace kvmmio::block
