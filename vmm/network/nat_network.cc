// SPDX-License-Identifier: BSD-2-Clause
// NAT networks: bridge, nftables masquerade, dnsmasq (see the header).
#include "vmm/network/nat_network.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "vmm/process/parse.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/net/net_options.h"
#include "vmm/process/usage_error.h"
#include "vmm/control/vm_directory.h"

namespace kvmmio::vmm {
namespace {

std::string errno_text() { return std::strerror(errno); }

// --- the tools -------------------------------------------------------------

struct Tool {
  const char* name;
  const char* package;
};
constexpr Tool kIp{"ip", "iproute2"};
constexpr Tool kNft{"nft", "nftables"};
constexpr Tool kDnsmasq{"dnsmasq", "dnsmasq-base"};

// The tool's absolute path in the system's own directories (not $PATH: a
// root command runs nothing a user's PATH could put first).
std::string tool_path(const Tool& t) {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    const std::string p = std::string(dir) + "/" + t.name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  throw UsageError(std::string("kvmmio network: no ") + t.name + " in /usr/sbin, /usr/bin, /sbin or /bin: apt-get install " +
                   t.package);
}

// Runs the tool with `args`, `input` on its stdin, in a fixed environment;
// returns its exit status, its stderr (and stdout) in `output`.
int run_tool(const Tool& t, const std::vector<std::string>& args, const std::string& input, std::string& output) {
  const std::string path = tool_path(t);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe2: " + errno_text());
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2: " + errno_text());
  UniqueFd out_r(out[0]), out_w(out[1]);
  std::vector<char*> argv;
  std::string name = t.name;
  argv.push_back(name.data());
  std::vector<std::string> copies(args);
  for (auto& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  char env_path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char env_lang[] = "LC_ALL=C";
  char* envp[] = {env_path, env_lang, nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork: " + errno_text());
  if (pid == 0) {
    ::dup2(in_r.get(), STDIN_FILENO);
    ::dup2(out_w.get(), STDOUT_FILENO);
    ::dup2(out_w.get(), STDERR_FILENO);
    ::execve(path.c_str(), argv.data(), envp);
    _exit(127);
  }
  in_r.reset();
  out_w.reset();
  // The input is small (a ruleset): the pipe holds it.
  if (!input.empty() && ::write(in_w.get(), input.data(), input.size()) != static_cast<ssize_t>(input.size()))
    output = "(its input could not be written: " + errno_text() + ")\n";
  in_w.reset();
  char buf[4096];
  for (ssize_t n; (n = ::read(out_r.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (output.size() < 64 * 1024) output.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "no message" : line;
}

// Runs the tool; a failure throws, naming the step.
void must(const Tool& t, const std::vector<std::string>& args, const std::string& what,
          const std::string& input = "") {
  std::string output;
  if (const int status = run_tool(t, args, input, output); status != 0)
    throw UserError("kvmmio network: " + what + ": " + t.name + " exited with status " + std::to_string(status) +
                    ": " + first_line(output));
}

// --- state -----------------------------------------------------------------

// BASE/.networks: a name no VM can have (VM names start with a letter or
// digit), root's alone.
std::string networks_dir() { return runtime_base() + "/.networks"; }

void make_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw UserError("kvmmio network: cannot create " + dir + ": " + errno_text());
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022))
    throw UserError("kvmmio network: " + dir + " is not a directory of root's that only root can write: remove it");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text << "\n";
  if (!out) throw UserError("kvmmio network: cannot write " + path);
}

std::string table_name(const std::string& name) { return "kvmmio-" + name; }

// A network's state directory and every file create puts there, gone.
void remove_state(const std::string& state) {
  for (const char* f : {"subnet", "ip_forward", "dnsmasq.pid", "leases", "dnsmasq.log"})
    ::unlink((state + "/" + f).c_str());
  ::rmdir(state.c_str());
}

// The dnsmasq of a network, if its pidfile names a live dnsmasq.
pid_t dnsmasq_pid(const std::string& state) {
  const std::string text = read_text(state + "/dnsmasq.pid");
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) return 0;
  const pid_t pid = static_cast<pid_t>(std::stol(text));
  if (pid <= 1 || read_text("/proc/" + std::to_string(pid) + "/comm") != "dnsmasq") return 0;
  return pid;
}

bool other_networks_than(const std::string& name) {
  DIR* d = ::opendir(networks_dir().c_str());
  if (!d) return false;
  bool found = false;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.' && name != e->d_name) found = true;
  ::closedir(d);
  return found;
}

constexpr char kForwarding[] = "/proc/sys/net/ipv4/ip_forward";

// --- create ------------------------------------------------------------------

// A host address already in the subnet, or a host subnet holding its
// gateway: the two would route each other's traffic.
void check_no_overlap(const Ipv4Subnet& subnet, const std::string& shown) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return;
  std::string clash;
  for (ifaddrs* a = list; a && clash.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_netmask) continue;
    const uint32_t addr = ntohl(reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr);
    const uint32_t mask = ntohl(reinterpret_cast<sockaddr_in*>(a->ifa_netmask)->sin_addr.s_addr);
    if (subnet.contains(addr) || (subnet.gateway() & mask) == (addr & mask))
      clash = std::string(a->ifa_name) + "'s " + ipv4_text(addr);
  }
  ::freeifaddrs(list);
  if (!clash.empty())
    throw UsageError(shown + ": " + subnet.text() + " overlaps " + clash +
                     " on this host: choose another --subnet (e.g. --subnet 10.77.0.0/24)");
}

std::string ruleset(const std::string& name, const Ipv4Subnet& subnet) {
  const std::string net = subnet.text(), table = table_name(name);
  // Masquerade what leaves the subnet; forward out of the bridge, and back
  // in only for connections the guests opened. Bridged traffic between the
  // guests never reaches these hooks.
  return "table ip " + table + " {\n" +
         "  chain postrouting {\n"
         "    type nat hook postrouting priority srcnat; policy accept;\n"
         "    ip saddr " + net + " ip daddr != " + net + " masquerade\n"
         "  }\n"
         "  chain forward {\n"
         "    type filter hook forward priority filter; policy accept;\n"
         "    iifname \"" + name + "\" ip saddr " + net + " accept\n"
         "    oifname \"" + name + "\" ct state established,related accept\n"
         "    oifname \"" + name + "\" drop\n"
         "    iifname \"" + name + "\" drop\n"
         "  }\n"
         "}\n";
}

int create(const NetworkCommand& cmd, std::FILE* out) {
  const std::string shown = "kvmmio network create " + cmd.name;
  const Ipv4Subnet& subnet = cmd.subnet;
  // Every tool first: a missing package fails before anything is made.
  for (const Tool* t : {&kIp, &kNft, &kDnsmasq}) tool_path(*t);
  const std::string base = runtime_base();
  make_private_dir(base);
  make_private_dir(networks_dir());
  const std::string state = networks_dir() + "/" + cmd.name;
  struct stat st {};
  if (::lstat(state.c_str(), &st) == 0)
    throw UsageError(shown + ": the network exists (kvmmio network list): delete it first (kvmmio network delete " +
                     cmd.name + ")");
  if (::if_nametoindex(cmd.name.c_str()) != 0)
    throw UsageError(shown + ": this host has an interface named " + cmd.name + ": choose another name");
  check_no_overlap(subnet, shown);

  // Each step's undo, run in reverse when a later step fails.
  std::vector<std::function<void()>> undo;
  auto undo_all = [&undo] {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      try {
        (*it)();
      } catch (...) {
      }
    }
  };
  try {
    make_private_dir(state);
    undo.push_back([state] { remove_state(state); });
    write_text(state + "/subnet", subnet.text());
    const std::string gateway = ipv4_text(subnet.gateway()) + "/" + std::to_string(subnet.prefix);
    must(kIp, {"link", "add", cmd.name, "type", "bridge"}, "making the bridge " + cmd.name);
    undo.push_back([&cmd] {
      std::string ignored;
      run_tool(kIp, {"link", "del", cmd.name}, "", ignored);
    });
    must(kIp, {"addr", "add", gateway, "dev", cmd.name}, "giving " + cmd.name + " " + gateway);
    must(kIp, {"link", "set", cmd.name, "up"}, "bringing " + cmd.name + " up");
    must(kNft, {"-f", "-"}, "adding the nftables table " + table_name(cmd.name), ruleset(cmd.name, subnet));
    undo.push_back([&cmd] {
      std::string ignored;
      run_tool(kNft, {"delete", "table", "ip", table_name(cmd.name)}, "", ignored);
    });
    // Forwarding on; its earlier value kept for the last network's delete.
    const std::string before = read_text(kForwarding);
    write_text(state + "/ip_forward", before.empty() ? "0" : before);
    if (before != "1") {
      std::ofstream f(kForwarding);
      f << "1\n";
      if (!f.flush()) throw UserError(shown + ": cannot turn on IPv4 forwarding (" + kForwarding + ")");
      undo.push_back([before] {
        std::ofstream g(kForwarding);
        g << (before.empty() ? "0" : before) << "\n";
      });
    }
    // dnsmasq on the bridge alone: no configuration file of the host's
    // (/dev/null), DHCP for the addresses after the gateway, DNS forwarded
    // to the host's resolvers. It daemonizes once it listens.
    const std::string range = ipv4_text(subnet.first_lease()) + "," + ipv4_text(subnet.last_lease()) + "," +
                              ipv4_text(subnet.mask()) + ",12h";
    // Its log (leases given, errors) in the state directory: also where
    // a start that fails says why.
    const std::string log = state + "/dnsmasq.log";
    std::vector<std::string> args = {"--conf-file=/dev/null", "--interface=" + cmd.name, "--bind-interfaces",
                                     "--except-interface=lo", "--dhcp-range=" + range, "--dhcp-authoritative",
                                     "--domain-needed", "--bogus-priv", "--pid-file=" + state + "/dnsmasq.pid",
                                     "--dhcp-leasefile=" + state + "/leases", "--log-facility=" + log};
    // The user Debian's dnsmasq-base makes for it, where there is one;
    // else dnsmasq's own default (nobody).
    if (::getpwnam("dnsmasq")) args.push_back("--user=dnsmasq");
    std::string output;
    const int status = run_tool(kDnsmasq, args, "", output);
    if (status != 0) {
      std::string why = first_line(output);
      if (why == "no message") {
        const std::string logged = read_text(log);
        why = logged.empty() ? "it said nothing: run it by hand with -d to see why"
                             : logged.substr(logged.rfind('\n') + 1);
      }
      throw UserError("kvmmio network: starting dnsmasq on " + cmd.name + ": dnsmasq exited with status " +
                      std::to_string(status) + ": " + why);
    }
    const pid_t dns = dnsmasq_pid(state);
    if (!dns) throw UserError(shown + ": dnsmasq started but " + state + "/dnsmasq.pid names no dnsmasq");
    std::fprintf(out,
                 "kvmmio network %s: bridge %s at %s; DHCP %s-%s and DNS from dnsmasq (PID %d); the subnet "
                 "masqueraded out of the host's other interfaces (nftables table ip %s).\n"
                 "Attach a VM with --net tap=TAP,bridge=%s; its guest takes an address by DHCP.\n",
                 cmd.name.c_str(), cmd.name.c_str(), gateway.c_str(), ipv4_text(subnet.first_lease()).c_str(),
                 ipv4_text(subnet.last_lease()).c_str(), static_cast<int>(dns), table_name(cmd.name).c_str(),
                 cmd.name.c_str());
    return 0;
  } catch (...) {
    undo_all();
    throw;
  }
}

// --- delete, list --------------------------------------------------------------

int remove(const NetworkCommand& cmd, std::FILE* out) {
  const std::string shown = "kvmmio network delete " + cmd.name;
  const std::string state = networks_dir() + "/" + cmd.name;
  struct stat st {};
  if (::lstat(state.c_str(), &st) != 0)
    throw UsageError(shown + ": no such network (kvmmio network list names them)");
  std::vector<std::string> problems;
  if (const pid_t pid = dnsmasq_pid(state)) {
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 200 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string output;
  if (run_tool(kNft, {"delete", "table", "ip", table_name(cmd.name)}, "", output) != 0 &&
      output.find("No such file") == std::string::npos)
    problems.push_back("nft: " + first_line(output));
  output.clear();
  if (::if_nametoindex(cmd.name.c_str()) != 0 && run_tool(kIp, {"link", "del", cmd.name}, "", output) != 0)
    problems.push_back("ip: " + first_line(output));
  const std::string before = read_text(state + "/ip_forward");
  if (before == "0" && !other_networks_than(cmd.name)) {
    std::ofstream f(kForwarding);
    f << "0\n";
  }
  remove_state(state);
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    throw UserError(shown + ": " + all);
  }
  std::fprintf(out, "kvmmio network %s: deleted\n", cmd.name.c_str());
  return 0;
}

// A field of dnsmasq's leases file as it may be printed: the host name is
// the guest's to choose, so anything but a name's characters is left out.
std::string lease_field(const std::string& field) {
  std::string shown;
  for (const char c : field.substr(0, 63))
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':') shown += c;
  return shown.empty() ? "-" : shown;  // dnsmasq's "*" for none is left out too
}

int list(std::FILE* out) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(networks_dir().c_str())) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::fprintf(out, "%-15s  %-18s  %-7s  %-8s  %s\n", "NAME", "SUBNET", "BRIDGE", "DNSMASQ", "LEASES");
  for (const std::string& name : names) {
    const std::string state = networks_dir() + "/" + name;
    const pid_t dns = dnsmasq_pid(state);
    // dnsmasq's leases: "EXPIRY MAC ADDRESS HOSTNAME CLIENT-ID" a line.
    std::vector<std::string> leases;
    std::ifstream in(state + "/leases");
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string expiry, mac, address, host;
      if (words >> expiry >> mac >> address >> host)
        leases.push_back("  lease " + lease_field(address) + "  " + lease_field(mac) + "  " + lease_field(host));
    }
    std::fprintf(out, "%-15s  %-18s  %-7s  %-8s  %zu\n", name.c_str(), read_text(state + "/subnet").c_str(),
                 ::if_nametoindex(name.c_str()) ? "up" : "missing", dns ? std::to_string(dns).c_str() : "stopped",
                 leases.size());
    for (const std::string& lease : leases) std::fprintf(out, "%s\n", lease.c_str());
  }
  return 0;
}

}  // namespace

std::string ipv4_text(uint32_t address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 255) + "." +
         std::to_string((address >> 8) & 255) + "." + std::to_string(address & 255);
}

std::string Ipv4Subnet::text() const { return ipv4_text(network) + "/" + std::to_string(prefix); }

Ipv4Subnet Ipv4Subnet::parse(const std::string& text, const std::string& shown) {
  const auto slash = text.find('/');
  in_addr a{};
  if (slash == std::string::npos || ::inet_pton(AF_INET, text.substr(0, slash).c_str(), &a) != 1)
    throw UsageError(shown + ": want an IPv4 subnet A.B.C.D/N, e.g. 192.168.123.0/24");
  Ipv4Subnet s;
  s.prefix = static_cast<int>(parse_uint(text.substr(slash + 1), shown + " (its prefix length)", 16, 29));
  s.network = ntohl(a.s_addr);
  if (s.network & ~s.mask())
    throw UsageError(shown + ": host bits set: the subnet is " + ipv4_text(s.network & s.mask()) + "/" +
                     std::to_string(s.prefix));
  return s;
}

int run_network(const NetworkCommand& cmd, std::FILE* out) {
  if (::geteuid() != 0)
    throw UsageError("kvmmio network needs root: it makes a bridge and nftables rules and starts dnsmasq (sudo kvmmio network ...)");
  switch (cmd.action) {
    case NetworkCommand::Action::kCreate: return create(cmd, out);
    case NetworkCommand::Action::kDelete: return remove(cmd, out);
    case NetworkCommand::Action::kList: return list(out);
  }
  return 1;
}

}  // namespace kvmmio::vmm
