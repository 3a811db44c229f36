// SPDX-License-Identifier: BSD-2-Clause
// run's options from a file (see the header).
#include "vmm/cli/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmmio/base/user_path.h"
#include "vmm/cli/options.h"

namespace kvmmio::vmm {
namespace {

bool key_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::vector<ConfigOption> parse_config_text(const std::string& text, const std::string& shown) {
  std::vector<ConfigOption> options;
  size_t pos = 0;
  for (int line_no = 1; pos < text.size(); ++line_no) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    const std::string at = shown + ", line " + std::to_string(line_no);
    if (line.find('\0') != std::string::npos) throw UsageError(at + ": a NUL byte: is this a text file?");
    size_t k = 0;
    while (k < line.size() && key_char(line[k])) ++k;
    const std::string key = line.substr(0, k);
    if (key.empty() || key[0] == '-')
      throw UsageError(at + ": '" + line.substr(0, 40) +
                       "': a line is KEY VALUE, KEY an option of run without --, e.g. mem 1G");
    std::string value;
    if (k < line.size() && line[k] == '=') {
      value = trim(line.substr(k + 1));
    } else if (k < line.size() && (line[k] == ' ' || line[k] == '\t')) {
      value = trim(line.substr(k));
    } else if (k < line.size()) {
      throw UsageError(at + ": '" + line.substr(0, 40) + "': a key is letters, digits and -, then a space or =");
    }
    if (value.empty()) throw UsageError(at + ": " + key + " needs a value, e.g. " + key + " VALUE");
    options.push_back({key, value, line_no});
  }
  return options;
}

std::vector<ConfigOption> read_config_file(const std::string& path) {
  const std::string shown = "--config " + path;
  const FoundFile found = find_user_file(path, shown);
  if (!found.exists()) throw UsageError(shown + ": " + std::strerror(found.error) + " (give the file's path)");
  if (!S_ISREG(found.st.st_mode))
    throw UsageError(shown + ": " + file_kind(found.st.st_mode) + ", not a regular file");
  if (found.st.st_size > static_cast<off_t>(kMaxConfigBytes))
    throw UsageError(shown + ": " + std::to_string(found.st.st_size) + " bytes; a config file has at most " +
                     std::to_string(kMaxConfigBytes));
  const UniqueFd fd = open_found(found, shown, O_RDONLY);
  if (!fd) throw UsageError(shown + ": " + std::strerror(errno));
  std::string text(kMaxConfigBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(shown + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxConfigBytes)
    throw UsageError(shown + ": more than " + std::to_string(kMaxConfigBytes) + " bytes; a config file has no more");
  text.resize(got);
  return parse_config_text(text, shown);
}

}  // namespace kvmmio::vmm
