// SPDX-License-Identifier: BSD-2-Clause
// `kvmmio run --config FILE`: run's options from a file, one per line, for
// a VM started the same way each time (the systemd unit kvmmio@.service
// runs /etc/kvmmio/NAME.conf):
//
//   # a comment line; blank lines are skipped
//   kernel /boot/vmlinuz-guest
//   initrd /boot/initrd.img-guest
//   cmdline root=/dev/vda rw
//   mem 1G
//   net tap=vm0,bridge=br0
//   disk /var/lib/kvmmio/vm0.img
//   console serial,socket
//
// A line is KEY VALUE or KEY=VALUE: KEY is an option of run without its
// "--", VALUE the rest of the line (spaces included, no quoting; trailing
// blanks dropped). Keys that may repeat on the command line (net, disk)
// may repeat here. The lines become options where --config stands, and
// are parsed as the command line is, so an option in both the file and
// the command line is refused as given twice, as is any other mistake,
// with the file and line named.
//
// The file is opened as every user-given path is (kvmmio/base/user_path.h):
// as root, no link in a directory others can write is followed.
#pragma once

#include <string>
#include <vector>

namespace kvmmio::vmm {

// A config file has at most this many bytes.
inline constexpr size_t kMaxConfigBytes = 64 * 1024;

struct ConfigOption {
  std::string key;    // without "--"
  std::string value;
  int line = 0;       // 1-based, for messages
};

// Reads FILE's options (UsageError starting with "--config FILE" naming
// the line and the fix: unreadable, too big, a line without a value, a
// key that is not an option name's shape). Whether each key is an option
// of run is the caller's to judge.
std::vector<ConfigOption> read_config_file(const std::string& path);

// Parses a config file's text (read_config_file's work, for tests).
std::vector<ConfigOption> parse_config_text(const std::string& text, const std::string& shown);

}  // namespace kvmmio::vmm
