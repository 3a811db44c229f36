// OutputFile: a file kvmmio writes at the end (--stats, --dump-dtb), opened
// at the start so that a bad path is a usage error before anything runs.
// If nothing is ever written (kvmmio stopped early), a file this object
// created is removed again; a file that existed is left untouched.
#pragma once

#include <span>
#include <string>

#include "kvmmio/unique_fd.h"

namespace kvmmio::vmm {

class OutputFile {
 public:
  OutputFile(const std::string& path, const std::string& option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Replaces the file's content; throws std::system_error on failure.
  void write(std::span<const uint8_t> content);
  void write(const std::string& content) {
    write({reinterpret_cast<const uint8_t*>(content.data()), content.size()});
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  UniqueFd fd_;
  bool created_ = false;
  bool written_ = false;
};

}  // namespace kvmmio::vmm
