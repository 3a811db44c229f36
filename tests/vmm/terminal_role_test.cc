// SPDX-License-Identifier: BSD-2-Clause
// kvmmio in the background of a real terminal: a child process becomes a
// session leader with a pty as its controlling terminal (setsid +
// TIOCSCTTY), then a grandchild in a process group of its own is a
// background job there, as `kvmmio run ... &` is in an interactive shell.
// The foreground check, raw mode (taken in the foreground only, and
// restored), and the stop signals (a background write with TOSTOP set
// does not stop a process that ignores SIGTTOU) are checked there.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <string>

#include "kvmmio/base/unique_fd.h"
#include "vmm/process/raw_terminal.h"

namespace kvmmio::vmm {
namespace {

// Exit codes of the child processes: which check failed.
enum Failure {
  kOk = 0,
  kSetupFailed = 10,
  kNotForeground,
  kRawNotTaken,
  kNotRestored,
  kGrandchildFailed,
  kNotBackground,
  kChangedInBackground,
  kWriteFailed,
  kStopped,
};

bool is_raw(int fd) {
  termios t{};
  return ::tcgetattr(fd, &t) == 0 && !(t.c_lflag & ICANON) && !(t.c_lflag & ECHO);
}

// In the background job: what kvmmio does at start must change nothing
// and stop nothing.
int background_job(int tty) {
  if (terminal_role(tty) != TerminalRole::kBackground) return kNotBackground;
  ignore_terminal_stop_signals();
  {
    RawTerminal raw(tty);
    if (raw.active() || is_raw(tty)) return kChangedInBackground;
  }
  // TOSTOP is set: without SIGTTOU ignored this write would stop us.
  if (::write(tty, "bg\n", 3) != 3) return kWriteFailed;
  return kOk;
}

// The session leader: the terminal's foreground job.
int session_leader(const char* slave_path) {
  if (::setsid() < 0) return kSetupFailed;
  const int tty = ::open(slave_path, O_RDWR | O_NOCTTY);
  if (tty < 0 || ::ioctl(tty, TIOCSCTTY, 0) != 0) return kSetupFailed;
  termios t{};
  if (::tcgetattr(tty, &t) != 0) return kSetupFailed;
  t.c_lflag |= TOSTOP | ICANON | ECHO;
  if (::tcsetattr(tty, TCSANOW, &t) != 0) return kSetupFailed;

  if (terminal_role(tty) != TerminalRole::kForeground) return kNotForeground;
  {
    RawTerminal raw(tty);
    if (!raw.active() || !is_raw(tty)) return kRawNotTaken;
  }
  if (is_raw(tty)) return kNotRestored;

  const pid_t job = ::fork();
  if (job < 0) return kSetupFailed;
  if (job == 0) {
    ::setpgid(0, 0);  // a job of its own, not the terminal's foreground one
    ::_exit(background_job(tty));
  }
  ::setpgid(job, job);
  int status = 0;
  if (::waitpid(job, &status, WUNTRACED) != job) return kSetupFailed;
  if (WIFSTOPPED(status)) {
    ::kill(job, SIGKILL);
    ::waitpid(job, &status, 0);
    return kStopped;
  }
  if (!WIFEXITED(status)) return kGrandchildFailed;
  return WEXITSTATUS(status);
}

// A new pseudo-terminal: its master side in `master`, its slave's path
// returned ("" on failure).
std::string new_pty(UniqueFd& master) {
  master.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  char path[128];
  if (!master || ::grantpt(master.get()) != 0 || ::unlockpt(master.get()) != 0 ||
      ::ptsname_r(master.get(), path, sizeof path) != 0)
    return "";
  return path;
}

TEST(TerminalRole, BackgroundJobOfARealTerminalIsLeftAloneAndNotStopped) {
  UniqueFd master;
  const std::string path = new_pty(master);
  ASSERT_FALSE(path.empty());
  const pid_t leader = ::fork();
  ASSERT_GE(leader, 0);
  if (leader == 0) ::_exit(session_leader(path.c_str()));
  int status = 0;
  ASSERT_EQ(::waitpid(leader, &status, 0), leader);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), kOk) << "see enum Failure";
  // What the background job wrote reached the terminal.
  char buf[256];
  pollfd p{master.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1) << "nothing reached the terminal";
  const ssize_t n = ::read(master.get(), buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_NE(std::string(buf, static_cast<size_t>(n)).find("bg"), std::string::npos);
}

TEST(TerminalRole, PipeIsNoTerminalAndAForeignPtyNoControllingOne) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  EXPECT_EQ(terminal_role(r.get()), TerminalRole::kNotTerminal);
  UniqueFd master;
  const std::string path = new_pty(master);
  ASSERT_FALSE(path.empty());
  UniqueFd slave(::open(path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(slave);
  EXPECT_EQ(terminal_role(slave.get()), TerminalRole::kNotControlling);
  RawTerminal raw(slave.get());
  EXPECT_FALSE(raw.active()) << "raw mode on a terminal that is not ours to take";
}

}  // namespace
}  // namespace kvmmio::vmm
