// SPDX-License-Identifier: BSD-2-Clause
// OutputFile: a file kvmmio writes at the end (--stats, --dump-dtb), opened
// at the start so that a bad path is a usage error before anything runs.
// If nothing is ever written (kvmmio stopped early), a file this object
// created is removed again; a file that existed is left untouched.
//
// A regular file is replaced whole on each write (a sibling temporary file
// renamed over it), so a reader polling it (--stats snapshots on SIGUSR1)
// never sees half a document. Anything else (a pipe, /dev/stdout) is
// written to in place, and so is a regular file that can no longer be
// replaced (a directory kvmmio cannot create in, or, after --user, a file
// the old identity made in a sticky directory): through the fd opened at
// the start, which still writes whatever the identity. "-" is standard
// output, written to in place.
//
// Every failure, opening or writing, is a UserError naming the option and
// the path: kvmmio exits 2 for it, as for any output the user asked for
// and cannot have.
#pragma once

#include <span>
#include <string>

#include "kvmmio/base/unique_fd.h"

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
  void write_in_place(std::span<const uint8_t> content);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  std::string option_;
  UniqueFd fd_;
  bool regular_ = false;
  bool created_ = false;
  bool written_ = false;
};

}  // namespace kvmmio::vmm
