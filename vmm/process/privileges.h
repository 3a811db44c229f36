// SPDX-License-Identifier: BSD-2-Clause
// Privileges: what kvmmio gives up once the machine is set up.
//
//   harden_process()    at start: not dumpable (no core file with guest
//                       memory, no ptrace by other processes of the same
//                       user; guest RAM is also MADV_DONTDUMP)
//   drop_privileges()   after set-up (--user, --group): every thread takes
//                       the unprivileged identity (glibc applies set*id to
//                       all threads), supplementary groups are dropped, and
//                       with a non-root user all capabilities go with root.
//                       What still works afterwards is what needs no
//                       privilege: the open /dev/kvm, tap and eventfds;
//                       /dev/vhost-net must be openable by that user
//                       (opened again at each DRIVER_OK); a removed tap is
//                       re-attached only if the user owns it; the --stats
//                       file, opened before, is still written (OutputFile).
//                       docs/security.md, "Running unprivileged".
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace kvmmio::vmm {

// --user and --group: a name (from /etc/passwd, /etc/group; no NSS, the
// binary is static) or a number. UsageError naming the option if unknown.
struct Identity {
  uid_t uid;
  gid_t gid;  // the user's primary group
};
Identity resolve_user(const std::string& name_or_uid, const char* passwd = "/etc/passwd");
gid_t resolve_group(const std::string& name_or_gid, const char* group = "/etc/group");

void harden_process();

// Becomes `uid`:`gid` for good (real, effective and saved IDs), with no
// supplementary groups. Throws std::system_error if the kernel refuses,
// or if the old identity could be taken back (a failed drop).
void drop_privileges(uid_t uid, gid_t gid);

// The capabilities the process has in its effective set (a bit mask).
uint64_t effective_capabilities();

}  // namespace kvmmio::vmm
