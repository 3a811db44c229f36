// SPDX-License-Identifier: BSD-2-Clause
// NAT networks (`kvmmio network create|delete|list`): the way out for a
// guest on a host that cannot bridge its uplink (a board on Wi-Fi), as
// libvirt's default network gives one.
//
// A network NAME is, on the host:
//   - a Linux bridge NAME holding the subnet's first address (the guests'
//     gateway and DNS server);
//   - an nftables table `ip kvmmio-NAME`: the subnet's traffic to anywhere
//     else masqueraded (source NAT to the outgoing interface's address),
//     forwarded out of the bridge and back for connections the guests
//     opened; new connections towards the guests from outside dropped;
//   - IPv4 forwarding on (net.ipv4.ip_forward; its earlier value is kept
//     and put back when the last network goes);
//   - a dnsmasq (Debian's dnsmasq-base) on the bridge only: DHCP for the
//     subnet's addresses after the gateway, and DNS forwarded to the
//     host's resolvers (its /etc/resolv.conf) with the host's /etc/hosts;
//   - its state in BASE/.networks/NAME (BASE: the named VMs' runtime
//     directory, /run/kvmmio): the subnet, the earlier ip_forward, the
//     dnsmasq pidfile, its leases and its log.
// A VM joins it with `--net tap=TAP,bridge=NAME`: the data path is the
// tap's as on any bridge (vhost-net, irqfd, the register mirror); the
// guest takes its address by DHCP. Root only (a bridge, nftables and a
// daemon). The tools are run by absolute path from /usr/sbin, /usr/bin,
// /sbin, /bin with a fixed environment, never through a shell.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace kvmmio::vmm {

// An IPv4 subnet, host byte order: `network` has no host bits.
struct Ipv4Subnet {
  uint32_t network = 0;
  int prefix = 24;

  // "A.B.C.D/N", N 16-29, no host bits set. UsageError starting with
  // `shown` naming the fix otherwise.
  static Ipv4Subnet parse(const std::string& text, const std::string& shown);
  uint32_t mask() const { return prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix); }
  uint32_t gateway() const { return network + 1; }
  uint32_t first_lease() const { return network + 2; }
  uint32_t last_lease() const { return (network | ~mask()) - 1; }
  bool contains(uint32_t address) const { return (address & mask()) == network; }
  std::string text() const;  // "192.168.123.0/24"
};
std::string ipv4_text(uint32_t address);

inline constexpr char kDefaultNetworkName[] = "kvmnat0";
inline constexpr char kDefaultNetworkSubnet[] = "192.168.123.0/24";

struct NetworkCommand {
  enum class Action { kCreate, kDelete, kList };
  Action action = Action::kList;
  std::string name = kDefaultNetworkName;
  Ipv4Subnet subnet;
};

// Each returns the process's exit status; UsageError names the fix (not
// root, a missing tool and its package, a name in use, a subnet that
// overlaps the host's addresses). A create that fails half-way undoes what
// it did.
int run_network(const NetworkCommand& cmd, std::FILE* out = stdout);

}  // namespace kvmmio::vmm
