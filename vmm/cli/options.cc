// SPDX-License-Identifier: BSD-2-Clause
// The kvmmio command line: parsing and checks that need neither files nor
// KVM. Checks that do (does the kernel exist, does KVM allow N vCPUs) are
// made where those are opened, with the same kind of message.
#include "vmm/cli/options.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "config.h"
#include "vmm/cli/config_file.h"
#include "vmm/cli/device_specs.h"
#include "vmm/process/parse.h"
#include "vmm/boot/memory_map_arm64.h"
#include "vmm/process/unix_socket.h"
#include "vmm/control/vm_directory.h"

namespace kvmmio::vmm {
namespace {

// Linux arm64's COMMAND_LINE_SIZE is 2048, including the terminating NUL.
constexpr size_t kMaxCmdline = 2047;

int parse_cpus(const std::string& value) {
  try {
    return static_cast<int>(parse_uint(value, "--cpus " + value, 1, layout::kMaxCpusGicV3));
  } catch (const UserError& e) {
    throw UsageError(std::string(e.what()) +
                     " (GICv3 redistributor space in kvmmio's memory map; GICv2 allows at most " +
                     std::to_string(layout::kMaxCpusGicV2) + ")");
  }
}

// A plain number counts MiB (as lkvm, crosvm and QEMU read it); K, M, G and
// T are binary multiples.
uint64_t parse_mem(const std::string& value) {
  const std::string shown = "--mem " + value;
  const uint64_t bytes = parse_size(value, shown, 20);
  if (bytes == 0) throw UsageError(shown + ": the guest needs RAM; e.g. --mem 512 (MiB) or --mem 1G");
  if (bytes % layout::kRamAlign != 0)
    throw UsageError(shown + ": give a whole number of MiB (e.g. --mem " +
                     std::to_string(bytes / layout::kRamAlign + 1) + ")");
  if (bytes > layout::kMaxRamSize)
    throw UsageError(shown +
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

// serial|virtio[,DEST][,KEY=VALUE...]: DEST is one item naming where the
// console goes (console_destination.h); the keys are the virtio-mmio
// transport's (version=, notify=, irq=, ...), as --net takes them; each is
// handed to set_transport_key() (device_specs.h), so a new transport key
// needs no change here.
void parse_console(RunOptions& o, const std::string& value) {
  const std::string shown = "--console " + value;
  const size_t comma = value.find(',');
  const std::string kind = value.substr(0, comma);
  if (kind == "serial") {
    o.console = ConsoleKind::kSerial;
  } else if (kind == "virtio") {
    o.console = ConsoleKind::kVirtio;
  } else {
    throw UsageError(shown +
                     ": choose serial (the PL011 UART, ttyAMA0) or virtio "
                     "(virtio-console, hvc0), then optionally where it goes: "
                     "e.g. --console serial,pty");
  }
  if (comma == std::string::npos) return;
  const std::string_view rest = std::string_view(value).substr(comma + 1);
  if (rest.empty())
    throw UsageError(shown + ": an option is missing after the comma, e.g. --console " + kind +
                     ",pty");
  // The destination items first; what is left are transport keys.
  std::string transport_keys;
  bool have_destination = false;
  for (std::string_view items = rest;;) {
    const size_t next = items.find(',');
    const std::string_view item = items.substr(0, next);
    if (auto d = parse_console_destination(item, shown)) {
      if (have_destination)
        throw UsageError(shown + ": two destinations (" + o.console_to.to_string() + " and " +
                         d->to_string() + "); the console goes to one: keep one of them");
      o.console_to = std::move(*d);
      have_destination = true;
    } else {
      transport_keys += (transport_keys.empty() ? "" : ",") + std::string(item);
    }
    if (next == std::string_view::npos) break;
    items = items.substr(next + 1);
  }
  if (transport_keys.empty()) return;
  if (o.console == ConsoleKind::kSerial)
    throw UsageError(shown + ": '" + transport_keys +
                     "': serial takes only a destination (stdio, file=PATH, pty, socket=PATH); "
                     "transport keys are virtio's, e.g. --console virtio,version=1");
  for (const auto& [key, val] : parse_key_values(transport_keys, shown)) {
    try {
      set_transport_key(o.console_transport, key, val);
    } catch (const UserError& e) {
      throw UsageError("--console virtio," + std::string(key) + "=" + std::string(val) + ": " +
                       e.what());
    }
  }
}

bool parse_rng(const std::string& value) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw UsageError("--rng " + value +
                   ": choose on (the guest gets a virtio-rng entropy device, /dev/hwrng; the "
                   "default) or off (no entropy device)");
}

OnReboot parse_on_reboot(const std::string& value) {
  if (value == "restart") return OnReboot::kRestart;
  if (value == "exit") return OnReboot::kExit;
  throw UsageError("--on-reboot " + value +
                   ": choose restart (the guest boots again in the same kvmmio; the default) or "
                   "exit (kvmmio ends with exit status 3)");
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

Command command_of(Command::Kind kind) {
  Command cmd;
  cmd.kind = kind;
  return cmd;
}

// The options of `run`, each with what its value is (for "needs a value")
// and how it is applied.
std::vector<CliOption> run_options(RunOptions& o, bool& help) {
  return {
      {"--kernel", "an arm64 Image or Image.gz file, e.g. --kernel /boot/Image",
       [&o](const std::string& v) { o.kernel = non_empty("--kernel", v, "a file"); }},
      {"--initrd", "an initramfs file, e.g. --initrd initrd.img",
       [&o](const std::string& v) { o.initrd = non_empty("--initrd", v, "a file"); }},
      {"--cmdline", "kernel command-line words to add, e.g. --cmdline \"quiet root=/dev/vda\"",
       [&o](const std::string& v) { o.cmdline_extra = v; }},
      {"--cmdline-replace", "the whole kernel command line, e.g. --cmdline-replace \"console=ttyAMA0\"",
       [&o](const std::string& v) { o.cmdline_replace = v; }},
      {"--mem", "a size, e.g. --mem 512 (MiB) or --mem 1G",
       [&o](const std::string& v) { o.mem = parse_mem(v); }},
      {"--cpus", "a number of vCPUs, e.g. --cpus 2",
       [&o](const std::string& v) { o.cpus = parse_cpus(v); }},
      {"--gic", "auto, v3 or v2", [&o](const std::string& v) { o.gic = parse_gic(v); }},
      {"--console", "serial or virtio[,stdio|file=PATH|pty|socket=PATH][,version=1|2]",
       [&o](const std::string& v) { parse_console(o, v); }},
      {"--dump-dtb", "an output file (- for stdout), e.g. --dump-dtb guest.dtb",
       [&o](const std::string& v) { o.dump_dtb = non_empty("--dump-dtb", v, "a file"); }},
      {"--stats", "an output file (- for stdout), e.g. --stats stats.json",
       [&o](const std::string& v) { o.stats = non_empty("--stats", v, "a file"); }},
      {"--api-socket", "a socket path, e.g. --api-socket /run/kvmmio/vm0.sock",
       [&o](const std::string& v) {
         check_unix_socket_path(v, "--api-socket " + v);
         o.api_socket = v;
       }},
      {"--name", "a name for the VM, e.g. --name vm0",
       [&o](const std::string& v) {
         check_vm_name(v, "--name " + v);
         o.name = v;
       }},
      {"--net", "a network device, e.g. --net tap=kvmtap0 or --net vhost-user=/run/sw0.sock",
       [&o](const std::string& v) {
         net::NetOptions n = parse_net_spec(v);
         for (const net::NetOptions& other : o.nets) {
           if (!n.tap.empty() && other.tap == n.tap)
             throw UsageError("--net " + v + ": tap " + n.tap +
                              " is already another --net's; give each device a tap of its own");
           if (!n.vhost_user.empty() && other.vhost_user == n.vhost_user)
             throw UsageError("--net " + v + ": that socket is already another --net's; a vhost-user "
                              "backend serves one device a socket (give each its own, e.g. two --vdev)");
           if (n.mac && other.mac == n.mac)
             throw UsageError("--net " + v + ": that MAC is already another --net's");
         }
         o.nets.push_back(std::move(n));
       },
       /*repeatable=*/true},
      {"--disk", "a raw disk image, e.g. --disk debian.img or --disk base.img,ro=on",
       [&o](const std::string& v) {
         block::DiskOptions d = parse_disk_spec(v);
         for (const block::DiskOptions& other : o.disks)
           if (other.path == d.path)
             throw UsageError("--disk " + v + ": " + d.path +
                              " is already another --disk's; give each disk an image of its own");
         o.disks.push_back(std::move(d));
       },
       /*repeatable=*/true},
      {"--rng", "on or off", [&o](const std::string& v) { o.rng = parse_rng(v); }},
      // Not repeatable: a guest has one CID (parse_cli refuses a second --vsock).
      {"--vsock", "the guest's context ID, e.g. --vsock cid=3",
       [&o](const std::string& v) { o.vsock = parse_vsock_spec(v); }},
      {"--fs", "a shared folder, e.g. --fs tag=share,socket=/run/virtiofsd.sock",
       [&o](const std::string& v) {
         fs::FsOptions f = parse_fs_spec(v);
         for (const fs::FsOptions& other : o.shares) {
           if (other.tag == f.tag)
             throw UsageError("--fs " + v + ": tag " + f.tag +
                              " is already another --fs's; the guest mounts each by its tag, so give each its own");
           if (other.socket == f.socket)
             throw UsageError("--fs " + v + ": socket " + f.socket +
                              " is already another --fs's; a backend serves one device: start one virtiofsd per "
                              "folder");
         }
         o.shares.push_back(std::move(f));
       },
       /*repeatable=*/true},
      {"--seccomp", "on, log or off",
       [&o](const std::string& v) { o.seccomp = parse_seccomp(v); }},
      {"--on-reboot", "restart or exit",
       [&o](const std::string& v) { o.on_reboot = parse_on_reboot(v); }},
      {"--user", "a user name or number, e.g. --user kvmmio",
       [&o](const std::string& v) { o.user = non_empty("--user", v, "a user"); }},
      {"--group", "a group name or number, e.g. --group kvm",
       [&o](const std::string& v) { o.group = non_empty("--group", v, "a group"); }},
      {"--log-level", "debug, info, warn or error",
       [&o](const std::string& v) { o.log_level = parse_log_level(v, "--log-level " + v); }},
      {"--help", "", [&help](const std::string&) { help = true; }},
  };
}

// --config FILE (or --config=FILE), at most once: the file's options in
// its place, each checked to be one of run's (config_file.h).
std::vector<std::string> expand_config(const std::vector<std::string>& args, const std::vector<CliOption>& options,
                                       std::optional<std::string>& config) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string path;
    if (args[i] == "--config") {
      if (i + 1 >= args.size()) throw UsageError("--config needs a file, e.g. --config /etc/kvmmio/vm0.conf");
      path = args[++i];
    } else if (args[i].rfind("--config=", 0) == 0) {
      path = args[i].substr(9);
    } else {
      out.push_back(args[i]);
      continue;
    }
    if (config) throw UsageError("--config is given twice; give one file");
    if (path.empty()) throw UsageError("--config needs a file, e.g. --config /etc/kvmmio/vm0.conf");
    config = path;
    for (const ConfigOption& o : read_config_file(path)) {
      const std::string at = "--config " + path + ", line " + std::to_string(o.line);
      const std::string name = "--" + o.key;
      const bool known = std::any_of(options.begin(), options.end(),
                                     [&](const CliOption& c) { return c.name == name && !c.value.empty(); });
      if (o.key == "config") throw UsageError(at + ": a config file names no other (config)");
      if (!known)
        throw UsageError(at + ": no option '" + o.key +
                         "': a key is an option of run without --, e.g. kernel, mem, net (kvmmio --help)");
      out.push_back(name);
      out.push_back(o.value);
    }
  }
  return out;
}

Command parse_run(const std::vector<std::string>& args) {
  Command cmd;
  cmd.kind = Command::Kind::kRun;
  // --help and --version answer whatever else is on the line.
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") return command_of(Command::Kind::kHelp);
    if (args[i] == "--version") return command_of(Command::Kind::kVersion);
  }
  bool help = false;
  const std::vector<CliOption> options = run_options(cmd.run, help);
  std::optional<std::string> config;
  const std::vector<std::string> expanded =
      expand_config(std::vector<std::string>(args.begin() + 1, args.end()), options, config);
  try {
    parse_cli(options, expanded, 0);
  } catch (const UsageError&) {
    throw;
  } catch (const UserError& e) {
    const std::string m = e.what();
    if (config && m.find("given twice") != std::string::npos)
      throw UsageError(m + " (once in --config " + *config + " and once on the command line, or twice in the file)");
    throw UsageError(m);
  }
  if (help) return command_of(Command::Kind::kHelp);
  if (cmd.run.cmdline_extra && cmd.run.cmdline_replace)
    throw UsageError("--cmdline and --cmdline-replace: give one; --cmdline adds to the default \"" +
                     default_cmdline(cmd.run.console) + "\", --cmdline-replace is the whole line");
  if (const std::string line = cmd.run.kernel_cmdline(); line.size() > kMaxCmdline)
    throw UsageError(std::string(cmd.run.cmdline_replace ? "--cmdline-replace" : "--cmdline") +
                     ": the kernel command line is " + std::to_string(line.size()) +
                     " bytes; Linux on arm64 accepts at most " + std::to_string(kMaxCmdline) +
                     ": shorten it");
  // A disk without queues= gets one request queue per vCPU,
  // as many as Linux's virtio_blk uses, up to the bound.
  for (block::DiskOptions& d : cmd.run.disks)
    if (!d.queues) d.queues = std::min<unsigned>(static_cast<unsigned>(cmd.run.cpus), block::kMaxDiskQueues);
  if (cmd.run.name) {
    const std::string& name = *cmd.run.name;
    if (cmd.run.api_socket)
      throw UsageError("--api-socket " + *cmd.run.api_socket + " with --name " + name +
                       ": a named VM's control socket is " + vm_file(name, kApiSocketFile) +
                       " (kvmmio ctl " + name + " ...): drop --api-socket");
    if (cmd.run.console_to.kind == ConsoleDestination::Kind::kSocket && cmd.run.console_to.path.empty()) {
      cmd.run.console_to.path = vm_file(name, kConsoleSocketFile);
      check_unix_socket_path(cmd.run.console_to.path, "--console ...,socket with --name " + name);
    }
  }
  if (cmd.run.console_to.kind == ConsoleDestination::Kind::kSocket && cmd.run.console_to.path.empty())
    throw UsageError(
        "--console ...,socket without a path is a named VM's console socket (kvmmio console NAME): give "
        "--name NAME too, or a path, e.g. --console serial,socket=/run/kvmmio/vm0.console");
  if (cmd.run.api_socket && cmd.run.console_to.kind == ConsoleDestination::Kind::kSocket &&
      cmd.run.console_to.path == *cmd.run.api_socket)
    throw UsageError("--api-socket " + *cmd.run.api_socket +
                     ": the console socket has that path; give each its own");
  if (cmd.run.kernel.empty())
    throw UsageError(
        "--kernel IMAGE is required: the arm64 Linux Image to boot "
        "(e.g. kvmmio run --kernel /boot/Image)");
  return cmd;
}

// Whether a command's arguments (after its name) ask for --help.
bool asks_help(const std::vector<std::string>& args) {
  return std::any_of(args.begin() + 1, args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

// kvmmio ctl NAME|PATH COMMAND: the command is the server's to judge (a
// newer kvmmio may know more), so only its shape is checked here.
Command parse_ctl(const std::vector<std::string>& args) {
  if (asks_help(args)) return command_of(Command::Kind::kHelp);
  if (args.size() != 3)
    throw UsageError(
        "kvmmio ctl takes a VM and a command: kvmmio ctl NAME|PATH "
        "stats|info|pause|resume|shutdown|quit (NAME: the VM's --name; PATH: its --api-socket)");
  Command cmd = command_of(Command::Kind::kCtl);
  cmd.ctl.command = args[2];
  // A path has a slash (./vm0.sock for one here); anything else is a name.
  if (args[1].find('/') == std::string::npos) {
    check_vm_name(args[1], "kvmmio ctl " + args[1] + " (a path has a slash, e.g. ./" + args[1] + ")");
    cmd.ctl.name = args[1];
    cmd.ctl.socket = vm_file(args[1], kApiSocketFile);
  } else {
    cmd.ctl.socket = args[1];
  }
  check_unix_socket_path(cmd.ctl.socket, "kvmmio ctl " + args[1]);
  if (cmd.ctl.command.empty() || cmd.ctl.command.size() > 64)
    throw UsageError("kvmmio ctl: give a command: stats, info, pause, resume, shutdown or quit");
  return cmd;
}

// kvmmio list: no arguments.
Command parse_list(const std::vector<std::string>& args) {
  if (asks_help(args)) return command_of(Command::Kind::kHelp);
  if (args.size() != 1)
    throw UsageError("kvmmio list takes nothing more: it lists every named VM that runs (" + args[1] + "?)");
  return command_of(Command::Kind::kList);
}

// kvmmio stop NAME [--timeout S]
Command parse_stop(const std::vector<std::string>& args) {
  if (asks_help(args)) return command_of(Command::Kind::kHelp);
  Command cmd = command_of(Command::Kind::kStop);
  const std::vector<CliOption> options = {
      {"--timeout", "seconds to wait for the guest to power off, 1-3600, e.g. --timeout 60",
       [&cmd](const std::string& v) {
         cmd.stop.timeout_s = static_cast<int>(parse_uint(v, "--timeout " + v, 1, 3600));
       }},
  };
  std::vector<std::string> names;
  try {
    names = parse_cli(options, std::vector<std::string>(args.begin() + 1, args.end()), 1);
  } catch (const UserError& e) {
    throw UsageError(std::string("kvmmio stop: ") + e.what() + " (kvmmio stop NAME [--timeout S])");
  }
  if (names.size() != 1) throw UsageError("kvmmio stop takes a VM's name: kvmmio stop NAME [--timeout S]");
  check_vm_name(names[0], "kvmmio stop " + names[0]);
  cmd.stop.name = names[0];
  return cmd;
}

// kvmmio console NAME
Command parse_console_attach(const std::vector<std::string>& args) {
  if (asks_help(args)) return command_of(Command::Kind::kHelp);
  if (args.size() != 2) throw UsageError("kvmmio console takes one VM's name: kvmmio console NAME");
  check_vm_name(args[1], "kvmmio console " + args[1]);
  Command cmd = command_of(Command::Kind::kConsole);
  cmd.console_name = args[1];
  return cmd;
}

// kvmmio network create [NAME] [--subnet A.B.C.D/N] | delete [NAME] | list
Command parse_network(const std::vector<std::string>& args) {
  if (asks_help(args)) return command_of(Command::Kind::kHelp);
  constexpr const char* kUsage =
      "kvmmio network create [NAME] [--subnet A.B.C.D/N] | delete [NAME] | list";
  Command cmd = command_of(Command::Kind::kNetwork);
  const std::string action = args.size() > 1 ? args[1] : "";
  if (action == "create") cmd.network.action = NetworkCommand::Action::kCreate;
  else if (action == "delete") cmd.network.action = NetworkCommand::Action::kDelete;
  else if (action == "list") cmd.network.action = NetworkCommand::Action::kList;
  else throw UsageError(std::string("kvmmio network: ") + (action.empty() ? "give" : "unknown action '" + action + "':") +
                        " create, delete or list (" + kUsage + ")");
  std::string subnet = kDefaultNetworkSubnet;
  std::vector<CliOption> options;
  if (cmd.network.action == NetworkCommand::Action::kCreate)
    options.push_back({"--subnet", "the network's IPv4 subnet, /16 to /29, e.g. --subnet 192.168.123.0/24",
                       [&subnet](const std::string& v) { subnet = v; }});
  std::vector<std::string> names;
  try {
    names = parse_cli(options, std::vector<std::string>(args.begin() + 2, args.end()), 1);
  } catch (const UserError& e) {
    throw UsageError("kvmmio network " + action + ": " + e.what() + " (" + kUsage + ")");
  }
  if (cmd.network.action == NetworkCommand::Action::kList && !names.empty())
    throw UsageError("kvmmio network list takes nothing more (" + names[0] + "?)");
  if (names.size() > 1) throw UsageError("kvmmio network " + action + " takes one network's name (" + kUsage + ")");
  if (!names.empty()) cmd.network.name = names[0];
  const std::string shown = "kvmmio network " + action + " " + cmd.network.name;
  try {
    net::check_interface_name(cmd.network.name, shown + " (the bridge's name)");
    if (!std::isalnum(static_cast<unsigned char>(cmd.network.name[0])))
      throw UsageError(shown + ": a network's name starts with a letter or digit (it names the bridge and the "
                               "nftables table)");
    cmd.network.subnet = Ipv4Subnet::parse(subnet, shown + " --subnet " + subnet);
  } catch (const UsageError&) {
    throw;
  } catch (const UserError& e) {
    throw UsageError(e.what());
  }
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
  if (cmdline_replace) return *cmdline_replace;
  std::string line = default_cmdline(console);
  if (cmdline_extra && !cmdline_extra->empty()) line += " " + *cmdline_extra;
  return line;
}

std::string default_cmdline(ConsoleKind console) {
  // No earlycon: the kernel keeps its first messages and prints them when
  // the console driver registers. earlycon would print each byte through
  // the PL011 as it comes, an exit to kvmmio per byte, in the part of the
  // boot before the guest's clock starts: on the nested arm64 platform
  // that took exec-to-clock from ~0.9 s to ~2.6 s for Debian's kernel
  // (docs/benchmarks.md, "Start-up"). Add it to --cmdline to see a kernel
  // that dies before its console is up.
  return console == ConsoleKind::kSerial ? "console=ttyAMA0" : "console=hvc0";
}

Command parse_command_line(const std::vector<std::string>& args) {
  if (args.empty())
    throw UsageError(
        "no command given: run `kvmmio run --kernel IMAGE [options]` (see kvmmio "
        "--help)");
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help")
    return command_of(Command::Kind::kHelp);
  if (first == "--version") return command_of(Command::Kind::kVersion);
  if (first == "run") return parse_run(args);
  if (first == "ctl") return parse_ctl(args);
  if (first == "list") return parse_list(args);
  if (first == "stop") return parse_stop(args);
  if (first == "console") return parse_console_attach(args);
  if (first == "network") return parse_network(args);
  if (first.rfind("--", 0) == 0)
    throw UsageError("'" + first + "' comes after the command: kvmmio run " + first +
                     " ... (see kvmmio --help)");
  throw UsageError("unknown command '" + first +
                   "': the commands are run, list, stop, console, ctl and network (see kvmmio --help)");
}

std::string version_text() { return std::string("kvmmio ") + PACKAGE_VERSION + "\n"; }

std::string help_text() {
  return std::string(
      R"(Usage: kvmmio run --kernel IMAGE [options]
       kvmmio list | stop NAME [--timeout S] | console NAME
       kvmmio ctl NAME|PATH stats|info|pause|resume|shutdown|quit
       kvmmio network create [NAME] [--subnet A.B.C.D/N] | delete [NAME] | list
       kvmmio --help | --version

Boots an arm64 Linux Image in a KVM virtual machine on an arm64 host:
a GICv3 or GICv2, a PL011 UART on stdin/stdout, PSCI, virtio-mmio slots.

Options of `run`:
  --config FILE       run's options from FILE, one per line: KEY VALUE, KEY an
                      option without -- (kernel /boot/Image, net tap=vm0);
                      # starts a comment; an option in both is refused
  --kernel IMAGE      the arm64 Linux Image to boot (with the "ARM\x64"
                      header), uncompressed or gzip-compressed (Image.gz); not
                      vmlinux, an EFI zboot vmlinuz.efi or an x86 kernel
  --initrd FILE       an initramfs, placed in guest RAM and named in /chosen
  --cmdline STR       words added to the kernel command line, after the
                      default "console=ttyAMA0" (with --console virtio:
                      "console=hvc0"), e.g. --cmdline "root=/dev/vda rw";
                      add "earlycon" to see messages from before the console
  --cmdline-replace STR
                      the whole kernel command line instead of the default
                      and --cmdline (give console= yourself)
  --mem SIZE          guest RAM, a whole number of MiB (default 512): a plain
                      number counts MiB, K, M, G and T suffixes are binary
                      multiples (--mem 512, --mem 1G)
  --cpus N            vCPUs, 1-123 (GICv2: at most 8; default 1); the host's
                      KVM may allow fewer
  --gic auto|v3|v2    interrupt controller (default auto: v3 if the host offers
                      it, else v2)
  --console serial|virtio[,DEST][,KEY=VALUE...]
                      the guest console: the PL011 UART (ttyAMA0, default) or
                      virtio-console (hvc0), in the virtio-mmio slot after the
                      --net devices, and the expert keys (below); the UART
                      stays for earlycon, input goes to hvc0.
                      DEST is where the console goes: stdio (default),
                      file=PATH (output only, appended; created mode 0600),
                      pty (a pseudo-terminal; its /dev/pts path is printed on
                      stderr), socket=PATH (a unix socket, mode 0600, one
                      client at a time). A pty or socket never slows the
                      guest: output nobody takes is dropped and counted
  --net SPEC          a virtio-net device on a tap (repeatable); SPEC is
                      tap=NAME[,vhost=on|off|auto][,mac=MAC][,queues=N]
                      [,mtu=N][,bridge=NAME][,poll_us=N] and the expert keys
                      (below); the tap is created if absent, and added
                      to the existing bridge NAME; the default MAC is a
                      stable hash of the tap's name; poll_us: vhost-net
                      busy-polls each ring N microseconds (0-10000, 0: off);
                      vhost=auto (default) uses /dev/vhost-net when it opens
  --disk SPEC         a virtio-blk disk on a raw image (repeatable: vda, vdb,
                      ... in order, in the slots after --net and --console
                      virtio); SPEC is PATH[,ro=on|off][,serial=ID]
                      [,cache=writeback|none][,engine=io_uring|threads]
                      [,queues=N][,device=on] and the expert keys (below);
                      PATH is a regular file (a block device only with
                      device=on), whole 512-byte sectors, locked against
                      other users (shared with ro=on); in a directory other
                      users can write, no symlink is followed and only
                      root's or --user's files are taken (kvmmio(1),
                      PATHS); cache=none opens it O_DIRECT; queues=N
                      request queues, 1-16, each with its own I/O thread
                      (default: one per vCPU, at most 16)
  --vsock cid=N       a virtio-vsock device (at most one), in the slot after the
                      disks: the guest's AF_VSOCK address N (3-4294967294;
                      0, 1, 2 and 4294967295 are reserved), its data moved
                      by the host kernel's vhost-vsock (modprobe vhost_vsock)
                      with the VMM out of the path; a CID another VM holds
                      is refused
  --fs tag=NAME,socket=PATH
                      a virtio-fs shared folder (repeatable), in the slots
                      after --vsock: the guest mounts it with mount -t
                      virtiofs NAME DIR (NAME: 1-36 printable ASCII
                      characters, no spaces); its files are served by a
                      vhost-user backend you start first, e.g. virtiofsd
                      --socket-path=PATH --shared-dir DIR, that reads guest
                      RAM and the queues itself, with the VMM out of the
                      path; PATH is connected to by the same rules as
                      every user-given path (kvmmio(1), PATHS)
  --rng on|off        a virtio-rng entropy device (default on), in the slot
                      after every other virtio device: the guest's /dev/hwrng
                      (Linux's virtio_rng), bytes from the host's getrandom(2)
                      at most 1 MiB/s (bursts of 64 KiB); off: none
  --dump-dtb FILE     write the device tree the guest would get to FILE (- for
                      stdout) and exit without creating a VM (works on any
                      host; --gic auto describes a GICv3)
  --stats FILE        at exit, write a JSON document with vCPU exits by reason,
                      device counters and wall time to FILE (- for stdout);
                      SIGUSR1 writes a snapshot while the guest runs
  --api-socket PATH   the control socket: a unix socket (mode 0600) taking
                      one JSON request per line: {"cmd":"stats"}, "info",
                      "pause", "resume", "shutdown" (the guest's power key),
                      "quit"; at most 8 clients, lines of at most 4096 bytes
  --name NAME         a name for the VM (1-32 letters, digits, - _ .): its
                      control socket, pidfile and console socket (with
                      --console ...,socket and no path) in /run/kvmmio/NAME
                      (as root; else $XDG_RUNTIME_DIR/kvmmio/NAME), mode
                      0700; refused while a VM of that name runs. The
                      commands below reach it by NAME
  --seccomp on|log|off
                      system call filters per thread, installed once the
                      machine is set up (default on: a call outside a
                      thread's allow-list stops kvmmio, naming it; log: the
                      call is made and named once)
  --on-reboot restart|exit
                      the guest's reboot (PSCI SYSTEM_RESET): restart
                      (default) resets the devices and vCPUs and boots the
                      guest again in this kvmmio, with the same taps, disks,
                      console and sockets; beyond 10 reboots in a minute
                      kvmmio stops with exit status 3. exit: kvmmio ends
                      with exit status 3
  --user USER, --group GROUP
                      after set-up, become USER (and GROUP, else USER's
                      primary group) for good: no capabilities, no
                      supplementary groups; /dev/vhost-net must be openable
                      by USER (docs/security.md)
  --log-level LEVEL   debug, info (default), warn or error: kvmmio's messages
                      on stderr below LEVEL are left out; each line starts
                      with the seconds since kvmmio started
  -h, --help          this text

Without `run`:
  --version           kvmmio's version, then exit
  list                the named VMs that run: name, PID, state, uptime,
                      vCPUs, memory, MACs
  stop NAME [--timeout S]
                      press NAME's power key and wait S seconds (default 30,
                      1-3600) for it to power off, then quit it; exit 0 once
                      it stopped, 1 if it still runs 10 s after the quit
  console NAME        attach this terminal to NAME's console socket
                      (--console ...,socket); Ctrl-] detaches, the VM runs on
  ctl NAME|PATH COMMAND
                      send COMMAND (stats, info, pause, resume, shutdown,
                      quit) to the named VM, or to the kvmmio whose
                      --api-socket is PATH (a path has a slash: ./vm0.sock),
                      and print its answer; exit 0 on an answer, 1 on an
                      error answer, 2 when it cannot be reached
  network create [NAME] [--subnet A.B.C.D/N]
                      (root) a NAT network for guests: the bridge NAME
                      (default kvmnat0) at the subnet's first address
                      (default 192.168.123.0/24), its traffic masqueraded
                      out of the host's other interfaces (nftables), DHCP
                      and DNS from dnsmasq; VMs join it with
                      --net tap=TAP,bridge=NAME
  network delete [NAME]
                      (root) the bridge, rules and dnsmasq gone
  network list        the NAT networks: subnet, bridge, dnsmasq, leases

Expert keys of --net, --disk and --console virtio, for measurements and
comparisons: the defaults are kvmmio's fast path, and each other value
puts the VMM back in a path the defaults take it out of:
  irq=irqfd|relay     interrupts by irqfd (default), or relayed by kvmmio
  notify=ioeventfd|trap  queue notifies by ioeventfd (default), or an exit
  regs=mirror|trap    register reads from a read-only mirror (default), or
                      an exit each
  version=2|1         virtio-mmio 1.x (default), or the legacy transport
  event_idx=on|off    VIRTIO_F_EVENT_IDX offered (default) or not

Options take their value as --name VALUE or --name=VALUE (a value that
starts with -- only as --name=VALUE); each is given once, except --net
and --disk.

With the stdio console, when stdin is a terminal and kvmmio runs in its
foreground, it is put in raw mode (restored at exit): keys go to the guest;
Ctrl-A x stops the VM, Ctrl-A Ctrl-A sends Ctrl-A. Started in the background
(kvmmio run ... &), kvmmio leaves the terminal alone and reads no input from
it; it is never stopped by SIGTTIN or SIGTTOU.

Exit status:
  0    the guest powered off (PSCI SYSTEM_OFF), or --dump-dtb/--help/--version
  1    the VM failed (vCPU internal error, KVM_RUN failure, guest crash report)
  2    bad usage, set-up error, or an output file (--dump-dtb, --stats) that
       cannot be written (the message names the fix)
  3    the guest asked for a reset (PSCI SYSTEM_RESET) with --on-reboot exit,
       or rebooted more than 10 times in a minute (--on-reboot restart)
  128+N  stopped by signal N (SIGINT: 130, SIGTERM: 143) or Ctrl-A x (130)

The manual, man kvmmio (kvmmio(1)), has the rest: sizes, the memory map,
paths, the stats format.
)");
}

}  // namespace kvmmio::vmm
