// SPDX-License-Identifier: BSD-2-Clause
// Helpers for the vmm tests: a scratch directory removed at the end, file
// writing, crafted arm64 Image headers, and the traps other users can set
// in a directory they may write (kvmmio/base/user_path.h's rule).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kvmmio/base/user_path.h"

namespace kvmmio::vmm::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kvmmio-vmm-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void put_le(std::vector<uint8_t>& b, size_t off, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

// An arm64 Image of `file_size` bytes (at least 64) with this header: the
// layout of Documentation/arm64/booting.rst, magic "ARM\x64" at 56.
inline std::vector<uint8_t> make_image(uint64_t text_offset, uint64_t image_size, uint64_t flags,
                                       size_t file_size = 4096) {
  std::vector<uint8_t> b(std::max<size_t>(file_size, 64), 0);
  b[0] = 'M';  // like Linux's EFI stub: "MZ" in code0
  b[1] = 'Z';
  put_le(b, 8, text_offset, 8);
  put_le(b, 16, image_size, 8);
  put_le(b, 24, flags, 8);
  put_le(b, 56, 0x644d5241, 4);
  for (size_t i = 64; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7);
  return b;
}

// Flags of a modern little-endian 4 KiB-page kernel that may go anywhere.
constexpr uint64_t kModernFlags = 0xa;

// What an attacker without root leaves for a root kvmmio: in `dir`, a
// directory everyone may write (mode 01777 as /tmp, or 0777), under a
// TempDir,
//   link     a symbolic link to `victim`, root's file in a 0700 directory
//            (as /etc/shadow or /root/.bashrc would be),
//   foreign  a regular file of uid kOtherUid (a log or image of theirs).
// untouched() says whether both are as planted. Planting needs root
// (chown): tests GTEST_SKIP() when needs_root() says why.
class SharedDirTraps {
 public:
  static constexpr uid_t kOtherUid = 65534;
  static constexpr size_t kBytes = 4096;  // whole sectors, as a disk image

  static const char* needs_root() {
    return ::geteuid() == 0 ? nullptr : "planting another user's file needs root (chown)";
  }

  explicit SharedDirTraps(mode_t mode)
      : dir(top_.file("shared")),
        link(dir + "/link"),
        foreign(dir + "/foreign"),
        victim(top_.file("private") + "/victim") {
    make_dir(top_.file("private"), 0700);
    write_file(victim, content('v'));
    ::chmod(victim.c_str(), 0600);
    make_dir(dir, mode);
    if (::symlink(victim.c_str(), link.c_str()) != 0) throw std::runtime_error("symlink failed");
    write_file(foreign, content('f'));
    if (::chown(foreign.c_str(), kOtherUid, kOtherUid) != 0) throw std::runtime_error("chown failed");
    ::chmod(foreign.c_str(), 0666);  // anyone may write it: only the rule refuses
  }

  // Victim and foreign file as planted (content, mode, owner), and nothing
  // new beside either (no temporary file left).
  testing::AssertionResult untouched() const {
    if (read_file(victim) != content('v')) return testing::AssertionFailure() << victim << " changed";
    if (read_file(foreign) != content('f')) return testing::AssertionFailure() << foreign << " changed";
    struct stat v {}, f {};
    if (::stat(victim.c_str(), &v) != 0 || (v.st_mode & 07777) != 0600 || v.st_uid != 0)
      return testing::AssertionFailure() << victim << ": mode or owner changed";
    if (::lstat(foreign.c_str(), &f) != 0 || (f.st_mode & 07777) != 0666 || f.st_uid != kOtherUid)
      return testing::AssertionFailure() << foreign << ": mode or owner changed";
    const auto entries = [](const std::string& d) {
      return std::distance(std::filesystem::directory_iterator(d), {});
    };
    if (entries(top_.file("private")) != 1) return testing::AssertionFailure() << "a file beside the victim";
    if (entries(dir) != 2) return testing::AssertionFailure() << "a file left in " << dir;
    return testing::AssertionSuccess();
  }

  static std::vector<uint8_t> content(char c) { return std::vector<uint8_t>(kBytes, static_cast<uint8_t>(c)); }

 private:
  static void make_dir(const std::string& path, mode_t mode) {
    if (::mkdir(path.c_str(), mode) != 0 || ::chmod(path.c_str(), mode) != 0)
      throw std::runtime_error("mkdir " + path + " failed");
  }

  TempDir top_;  // first: the paths below are in it

 public:
  const std::string dir, link, foreign, victim;
};

// A scratch directory (0755) in the working directory: where the tests run
// from a build tree only root may write, a place the rule trusts (unlike
// anything under /tmp), for links it follows. skip_reason(): why not.
class TrustedDir {
 public:
  TrustedDir() {
    std::string tmpl = (std::filesystem::current_path() / "kvmmio-trusted-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()) || ::chmod(tmpl.c_str(), 0755) != 0)
      throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
    // Below a directory others can write (the arm64 platform's initramfs
    // "/"), root makes one of its own: a tmpfs mounted here, whose root
    // nobody can rename away, so the rule trusts it anew.
    if (!kvmmio::find_user_path(file("x"), "test").trusted() && ::geteuid() == 0 &&
        ::mount("kvmmio-test", path_.c_str(), "tmpfs", 0, "mode=0755") == 0)
      mounted_ = true;
  }
  ~TrustedDir() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const char* skip_reason() const {
    return kvmmio::find_user_path(file("x"), "test").trusted()
               ? nullptr
               : "the working directory is below one other users can write";
  }

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
};

// --user for one scope: the uid the rule trusts as it trusts root.
struct TrustPathOwner {
  explicit TrustPathOwner(uid_t uid) { kvmmio::trust_path_owner(uid); }
  ~TrustPathOwner() { kvmmio::trust_path_owner(static_cast<uid_t>(-1)); }
  TrustPathOwner(const TrustPathOwner&) = delete;
  TrustPathOwner& operator=(const TrustPathOwner&) = delete;
};

// The modes of a directory everyone may write: sticky (/tmp) or not.
inline constexpr mode_t kSharedDirModes[] = {01777, 0777};

}  // namespace kvmmio::vmm::test
