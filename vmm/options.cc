// The kvmmio command line: parsing and checks that need neither files nor
// KVM. Checks that do (does the kernel exist, does KVM allow N vCPUs) are
// made where those are opened, with the same kind of message.
#include "vmm/options.h"

#include <charconv>
#include <functional>
#include <map>

#include "config.h"
#include "vmm/memory_map_arm64.h"

namespace kvmmio::vmm {
namespace {

// Linux arm64's COMMAND_LINE_SIZE is 2048, including the terminating NUL.
constexpr size_t kMaxCmdline = 2047;

int parse_cpus(const std::string& value) {
  int n = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, n);
  if (ec != std::errc() || p != end || n < 1 || n > layout::kMaxCpusGicV3)
    throw UsageError("--cpus " + value + ": give a whole number from 1 to " +
                     std::to_string(layout::kMaxCpusGicV3) +
                     " (GICv3 redistributor space in kvmmio's memory map; GICv2 allows at most " +
                     std::to_string(layout::kMaxCpusGicV2) + ")");
  return n;
}

uint64_t parse_mem(const std::string& value) {
  const uint64_t bytes = parse_size(value, "--mem");
  if (bytes == 0) throw UsageError("--mem 0: the guest needs RAM; e.g. --mem 512M");
  if (bytes % layout::kRamAlign != 0)
    throw UsageError("--mem " + value + ": give a whole number of MiB (e.g. --mem " +
                     std::to_string((bytes + layout::kRamAlign - 1) >> 20) +
                     "M); a plain number counts bytes");
  if (bytes > layout::kMaxRamSize)
    throw UsageError("--mem " + value +
                     ": does not fit in the guest's 40-bit physical address "
                     "space above RAM base 0x40000000; use at most --mem " +
                     std::to_string(layout::kMaxRamSize >> 30) + "G");
  return bytes;
}

GicChoice parse_gic(const std::string& value) {
  if (value == "auto") return GicChoice::kAuto;
  if (value == "v3") return GicChoice::kV3;
  if (value == "v2") return GicChoice::kV2;
  throw UsageError("--gic " + value +
                   ": choose auto, v3 or v2 (auto: v3 if the host offers it, "
                   "else v2)");
}

// serial | virtio[,KEY=VALUE...]: the keys are the virtio-mmio transport's
// (version=, notify=, irq=), as --net takes them.
void parse_console(RunOptions& o, const std::string& value) {
  const size_t comma = value.find(',');
  const std::string kind = value.substr(0, comma);
  if (kind == "serial") {
    if (comma != std::string::npos)
      throw UsageError("--console " + value + ": serial takes no options (only virtio does, "
                       "e.g. --console virtio,version=1)");
    o.console = ConsoleKind::kSerial;
    return;
  }
  if (kind != "virtio")
    throw UsageError("--console " + value +
                     ": choose serial (the PL011 UART, ttyAMA0) or virtio "
                     "(virtio-console, hvc0)");
  o.console = ConsoleKind::kVirtio;
  std::string_view rest =
      comma == std::string::npos ? std::string_view() : std::string_view(value).substr(comma + 1);
  if (comma != std::string::npos && rest.empty())
    throw UsageError("--console " + value + ": an option is missing after the comma, e.g. "
                     "--console virtio,version=1");
  while (!rest.empty()) {
    const size_t next = rest.find(',');
    const std::string_view item = rest.substr(0, next);
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw UsageError("--console virtio: '" + std::string(item) +
                       "' is not KEY=VALUE (the keys: version=1|2, notify=ioeventfd|trap, "
                       "irq=irqfd|relay)");
    try {
      o.console_transport.set(item.substr(0, eq), item.substr(eq + 1));
    } catch (const UserError& e) {
      throw UsageError(std::string("--console virtio: ") + e.what());
    }
  }
}

SeccompMode parse_seccomp(const std::string& value) {
  if (value == "on") return SeccompMode::kOn;
  if (value == "log") return SeccompMode::kLog;
  if (value == "off") return SeccompMode::kOff;
  throw UsageError("--seccomp " + value +
                   ": choose on (a call outside a thread's allow-list stops kvmmio), log (it is "
                   "allowed and named) or off");
}

std::string non_empty(const std::string& option, const std::string& value, const char* what) {
  if (value.empty()) throw UsageError(option + " needs " + what + ", not an empty string");
  return value;
}

// How each option takes its value. All options of `run` take one.
using Setter = std::function<void(RunOptions&, const std::string&)>;
struct OptionSpec {
  const char* what;  // for "needs a value" messages
  Setter set;
};

const std::map<std::string, OptionSpec>& run_options() {
  static const std::map<std::string, OptionSpec> specs = {
      {"--kernel",
       {"an arm64 Image file, e.g. --kernel /boot/Image",
        [](RunOptions& o, const std::string& v) {
          o.kernel = non_empty("--kernel", v, "a file");
        }}},
      {"--initrd",
       {"an initramfs file, e.g. --initrd initrd.img",
        [](RunOptions& o, const std::string& v) {
          o.initrd = non_empty("--initrd", v, "a file");
        }}},
      {"--cmdline",
       {"the kernel command line, e.g. --cmdline \"console=ttyAMA0\"",
        [](RunOptions& o, const std::string& v) {
          if (v.size() > kMaxCmdline)
            throw UsageError("--cmdline is " + std::to_string(v.size()) +
                             " bytes; Linux on arm64 accepts at most " +
                             std::to_string(kMaxCmdline) + ": shorten it");
          o.cmdline = v;
        }}},
      {"--mem",
       {"a size, e.g. --mem 512M",
        [](RunOptions& o, const std::string& v) { o.mem = parse_mem(v); }}},
      {"--cpus",
       {"a number of vCPUs, e.g. --cpus 2",
        [](RunOptions& o, const std::string& v) { o.cpus = parse_cpus(v); }}},
      {"--gic",
       {"auto, v3 or v2", [](RunOptions& o, const std::string& v) { o.gic = parse_gic(v); }}},
      {"--console",
       {"serial or virtio[,version=1|2]",
        [](RunOptions& o, const std::string& v) { parse_console(o, v); }}},
      {"--dump-dtb",
       {"an output file, e.g. --dump-dtb guest.dtb",
        [](RunOptions& o, const std::string& v) {
          o.dump_dtb = non_empty("--dump-dtb", v, "a file");
        }}},
      {"--stats",
       {"an output file, e.g. --stats stats.json",
        [](RunOptions& o, const std::string& v) { o.stats = non_empty("--stats", v, "a file"); }}},
      {"--seccomp",
       {"on, log or off", [](RunOptions& o, const std::string& v) { o.seccomp = parse_seccomp(v); }}},
      {"--user",
       {"a user name or number, e.g. --user kvmmio",
        [](RunOptions& o, const std::string& v) { o.user = non_empty("--user", v, "a user"); }}},
      {"--group",
       {"a group name or number, e.g. --group kvm",
        [](RunOptions& o, const std::string& v) { o.group = non_empty("--group", v, "a group"); }}},
      {"--net",
       {"a network device, e.g. --net tap=kvmtap0",
        [](RunOptions& o, const std::string& v) {
          try {
            o.nets.push_back(net::NetOptions::parse(v));
          } catch (const UsageError&) {
            throw;
          } catch (const UserError& e) {
            throw UsageError(e.what());
          }
        }}},
  };
  return specs;
}

Command parse_run(const std::vector<std::string>& args) {
  Command cmd;
  cmd.kind = Command::Kind::kRun;
  std::map<std::string, bool> seen;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") return Command{Command::Kind::kHelp, {}};
    if (arg.rfind("--", 0) != 0)
      throw UsageError("unexpected argument '" + arg +
                       "': options of `kvmmio run` start with -- "
                       "(see kvmmio --help)");
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    auto it = run_options().find(name);
    if (it == run_options().end())
      throw UsageError("unknown option '" + name +
                       "' for `kvmmio run`; see kvmmio --help for the "
                       "options");
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw UsageError(name + " needs a value: " + it->second.what);
    }
    if (seen[name] && name != "--net") throw UsageError(name + " is given twice; give it once");
    seen[name] = true;
    it->second.set(cmd.run, value);
  }
  if (cmd.run.kernel.empty())
    throw UsageError(
        "--kernel IMAGE is required: the arm64 Linux Image to boot "
        "(e.g. kvmmio run --kernel /boot/Image)");
  return cmd;
}

}  // namespace

const char* to_string(GicChoice gic) {
  switch (gic) {
    case GicChoice::kAuto: return "auto";
    case GicChoice::kV3: return "v3";
    case GicChoice::kV2: return "v2";
  }
  return "?";
}

const char* to_string(ConsoleKind console) {
  return console == ConsoleKind::kSerial ? "serial" : "virtio";
}

RunOptions::RunOptions() : mem(layout::kDefaultRamSize) {}

std::string RunOptions::kernel_cmdline() const {
  return cmdline.value_or(default_cmdline(console));
}

std::string default_cmdline(ConsoleKind console) {
  // earlycon finds the PL011 through /chosen/stdout-path, so messages from
  // before the console driver probes are not lost.
  return console == ConsoleKind::kSerial ? "console=ttyAMA0 earlycon" : "console=hvc0 earlycon";
}

uint64_t parse_size(std::string_view text, std::string_view option) {
  const std::string shown = std::string(option) + " " + std::string(text);
  const std::string fix =
      ": give a number of bytes with an optional K, M or G suffix (binary "
      "multiples), e.g. " +
      std::string(option) + " 512M";
  if (text.empty()) throw UsageError(std::string(option) + " needs a size" + fix);
  uint64_t shift = 0;
  switch (text.back()) {
    case 'k':
    case 'K': shift = 10; break;
    case 'm':
    case 'M': shift = 20; break;
    case 'g':
    case 'G': shift = 30; break;
    default: break;
  }
  std::string_view digits = shift ? text.substr(0, text.size() - 1) : text;
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) {
    if (ec == std::errc::result_out_of_range) throw UsageError(shown + ": too large" + fix);
    throw UsageError(shown + ": not a size" + fix);
  }
  if (shift && n > (UINT64_MAX >> shift)) throw UsageError(shown + ": too large" + fix);
  return n << shift;
}

Command parse_command_line(const std::vector<std::string>& args) {
  if (args.empty())
    throw UsageError(
        "no command given: run `kvmmio run --kernel IMAGE [options]` (see kvmmio "
        "--help)");
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help")
    return Command{Command::Kind::kHelp, {}};
  if (first == "--version") return Command{Command::Kind::kVersion, {}};
  if (first == "run") return parse_run(args);
  if (first.rfind("--", 0) == 0)
    throw UsageError("'" + first + "' comes after the command: kvmmio run " + first +
                     " ... (see kvmmio --help)");
  throw UsageError("unknown command '" + first + "': the command is `run` (see kvmmio --help)");
}

std::string version_text() { return std::string("kvmmio ") + PACKAGE_VERSION + "\n"; }

std::string help_text() {
  return std::string(
      R"(Usage: kvmmio run --kernel IMAGE [options]
       kvmmio --help | --version

Boots an arm64 Linux Image in a KVM virtual machine on an arm64 host:
a GICv3 or GICv2, a PL011 UART on stdin/stdout, PSCI, virtio-mmio slots.

Options of `run`:
  --kernel IMAGE      the arm64 Linux Image to boot (uncompressed, with the
                      "ARM\x64" header; not Image.gz, vmlinux or an x86 kernel)
  --initrd FILE       an initramfs, placed in guest RAM and named in /chosen
  --cmdline STR       the kernel command line; default "console=ttyAMA0
                      earlycon" (with --console virtio: "console=hvc0 earlycon")
  --mem SIZE          guest RAM, a whole number of MiB (default 512M); K, M, G
                      suffixes are binary multiples, a plain number is bytes
  --cpus N            vCPUs, 1-123 (GICv2: at most 8; default 1); the host's
                      KVM may allow fewer
  --gic auto|v3|v2    interrupt controller (default auto: v3 if the host offers
                      it, else v2)
  --console serial|virtio[,KEY=VALUE...]
                      the guest console: the PL011 UART (ttyAMA0, default) or
                      virtio-console (hvc0), in the virtio-mmio slot after the
                      --net devices, with --net's transport keys: version=1|2,
                      notify=ioeventfd|trap, irq=irqfd|relay; the UART stays
                      for earlycon, stdin goes to hvc0
  --net SPEC          a virtio-net device on a tap (repeatable); SPEC is
                      tap=NAME[,vhost=on|off|auto][,irq=irqfd|relay]
                      [,notify=ioeventfd|trap][,version=1|2][,mac=MAC]
                      [,queues=N][,mtu=N]; the tap is created if absent;
                      vhost=auto (default) uses /dev/vhost-net when it opens
  --dump-dtb FILE     write the device tree the guest would get to FILE and exit
                      without creating a VM (works on any host; --gic auto
                      describes a GICv3)
  --stats FILE        at exit, write a JSON document with vCPU exits by reason,
                      device counters and wall time to FILE; SIGUSR1 writes
                      a snapshot while the guest runs
  --seccomp on|log|off
                      system call filters per thread, installed once the
                      machine is set up (default on: a call outside a
                      thread's allow-list stops kvmmio, naming it; log: the
                      call is made and named once)
  --user USER, --group GROUP
                      after set-up, become USER (and GROUP, else USER's
                      primary group) for good: no capabilities, no
                      supplementary groups; /dev/vhost-net must be openable
                      by USER (docs/security.md)
  -h, --help          this text

When stdin is a terminal it is put in raw mode (restored at exit): keys go to
the guest; Ctrl-A x stops the VM, Ctrl-A Ctrl-A sends Ctrl-A.

Exit status:
  0    the guest powered off (PSCI SYSTEM_OFF), or --dump-dtb/--help/--version
  1    the VM failed (vCPU internal error, KVM_RUN failure, guest crash report)
  2    bad usage or set-up error (the message names the fix); nothing started
  3    the guest asked for a reset (PSCI SYSTEM_RESET): kvmmio does not reboot
       in-process; run it again
  128+N  stopped by signal N (SIGINT: 130, SIGTERM: 143) or Ctrl-A x (130)

Sizes, the memory map and the stats format: docs/usage.md and kvmmio(1).
)");
}

}  // namespace kvmmio::vmm
