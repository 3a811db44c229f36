// SPDX-License-Identifier: BSD-2-Clause
// Dumpability, identity lookup and the privilege drop (see the header).
#include "vmm/process/privileges.h"

#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include "kvmmio/base/error.h"
#include "vmm/process/usage_error.h"

namespace kvmmio::vmm {
namespace {

std::optional<unsigned long> number(const std::string& s) {
  unsigned long n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || n > 0xfffffffeul) return std::nullopt;
  return n;
}

// The fields of the line of `file` whose first field is `name`, or whose
// third is `id` (name empty).
std::optional<std::vector<std::string>> find_entry(const char* file, const std::string& name,
                                                   std::optional<unsigned long> id) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ':')) fields.push_back(f);
    if (fields.size() < 3) continue;
    if ((!name.empty() && fields[0] == name) || (id && number(fields[2]) == id)) return fields;
  }
  return std::nullopt;
}

}  // namespace

Identity resolve_user(const std::string& user, const char* passwd) {
  const auto uid = number(user);
  const auto entry = find_entry(passwd, uid ? "" : user, uid);
  if (entry && entry->size() >= 4) {
    const auto u = number((*entry)[2]);
    const auto g = number((*entry)[3]);
    if (u && g) return {static_cast<uid_t>(*u), static_cast<gid_t>(*g)};
  }
  if (uid) return {static_cast<uid_t>(*uid), static_cast<gid_t>(*uid)};  // no entry: group = uid
  throw UsageError("--user " + user + ": no such user in /etc/passwd; give a user name or a number");
}

gid_t resolve_group(const std::string& group, const char* group_file) {
  const auto gid = number(group);
  if (gid) return static_cast<gid_t>(*gid);
  const auto entry = find_entry(group_file, group, std::nullopt);
  if (entry) {
    if (const auto g = number((*entry)[2])) return static_cast<gid_t>(*g);
  }
  throw UsageError("--group " + group + ": no such group in /etc/group; give a group name or a number");
}

void harden_process() {
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) throw_errno("PR_SET_DUMPABLE");
}

void drop_privileges(uid_t uid, gid_t gid) {
  // Groups first: once the user is not root, they cannot be changed.
  if (::setgroups(0, nullptr) != 0) throw_errno("setgroups (dropping supplementary groups)");
  if (::setresgid(gid, gid, gid) != 0) throw_errno("setresgid " + std::to_string(gid));
  if (::setresuid(uid, uid, uid) != 0) throw_errno("setresuid " + std::to_string(uid));
  // Changing identity makes the process dumpable again per the sysctl.
  harden_process();
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (::getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid || ::getresgid(&rg, &eg, &sg) != 0 ||
      rg != gid || eg != gid || sg != gid)
    throw std::runtime_error("the identity did not change to " + std::to_string(uid) + ":" + std::to_string(gid));
  if (uid != 0 && (::setresuid(0, 0, 0) == 0 || effective_capabilities() != 0))
    throw std::runtime_error("root's privileges could be taken back after dropping them");
}

uint64_t effective_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) throw_errno("capget");
  return data[0].effective | (uint64_t{data[1].effective} << 32);
}

}  // namespace kvmmio::vmm
