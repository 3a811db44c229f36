// SPDX-License-Identifier: BSD-2-Clause
// OutputFile: a file kvmmio writes at the end (--stats, --dump-dtb), opened
// at the start so that a bad path is a usage error before anything runs.
// If nothing is ever written (kvmmio stopped early), a file this object
// created is removed again; a file that existed is left untouched.
//
// The path is opened by the rule of kvmmio/base/user_path.h: no link is
// followed and no other user's file is used in a directory others can
// write. A new file is created there with O_EXCL (never through a link,
// never an existing file). A regular file is replaced whole on each write
// (a temporary file with a random name, created with O_EXCL in the same
// directory and renamed over it), so a reader polling it (--stats
// snapshots on SIGUSR1) never sees half a document. Anything else (a pipe,
// /dev/stdout, /dev/null) is written to in place, and so is a regular file
// that can no longer be replaced (a directory kvmmio cannot create in, or,
// after --user, a file the old identity made in a sticky directory) when
// root or the --user owns it: through the fd opened at the start. "-" is
// standard output, written to in place.
//
// Every failure, opening or writing, is a UserError naming the option and
// the path: kvmmio exits 2 for it, as for any output the user asked for
// and cannot have.
#pragma once

#include <span>
#include <string>

#include "kvmmio/base/unique_fd.h"
#include "kvmmio/base/user_path.h"

namespace kvmmio::vmm {

class OutputFile {
 public:
  OutputFile(const std::string& path, const std::string& option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Replaces the file's content; throws UserError on failure. May be
  // called more than once.
  void write(std::span<const uint8_t> content);
  void write(const std::string& content) {
    write({reinterpret_cast<const uint8_t*>(content.data()), content.size()});
  }
  const std::string& path() const { return path_; }

 private:
  void open_existing(PathPlace place);
  bool replace(std::span<const uint8_t> content);
  void write_in_place(std::span<const uint8_t> content);
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_to_open() const;

  std::string path_;
  std::string option_;
  PathPlace place_;  // where a regular file is replaced
  UniqueFd fd_;
  bool regular_ = false;   // replaced by a rename
  bool in_place_ = false;  // may be written through fd_ (root's or the --user's)
  bool created_ = false;
  bool written_ = false;
};

}  // namespace kvmmio::vmm
