// SPDX-License-Identifier: BSD-2-Clause
// The device options' words, parsed into the library's typed
// configurations: --net, --disk, --fs and --vsock specifications and the
// virtio-mmio transport's keys (version=, notify=, irq=, regs=,
// event_idx=) that --net, --disk and --console virtio take. The words are
// the program's (docs/usage.md); the library takes only the structs.
//
// Each parser checks everything that needs no system call (the tap, the
// image and the sockets are opened later, by the devices) and throws
// UserError whose message starts with the option as typed ("--net
// queues=0") and says what to give instead.
#pragma once

#include <string_view>

#include "kvmmio/block/disk_options.h"
#include "kvmmio/fs/fs_options.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/virtio/transport_options.h"
#include "kvmmio/vsock/vsock_options.h"

namespace kvmmio::vmm {

// One transport key: version=1|2, notify=ioeventfd|trap, irq=irqfd|relay,
// regs=mirror|trap, event_idx=on|off. A UserError names the accepted
// values (the caller adds which option it was).
void set_transport_key(virtio::TransportOptions& transport, std::string_view key, std::string_view value);

//   tap=NAME[,vhost=on|off|auto][,mac=XX:XX:XX:XX:XX:XX][,queues=N][,mtu=N]
//          [,bridge=NAME][,poll_us=N][,TRANSPORT KEYS]
//   vhost-user=PATH[,mac=...][,reply_timeout_ms=N][,TRANSPORT KEYS]
net::NetOptions parse_net_spec(std::string_view spec);

//   PATH[,ro=on|off][,serial=ID][,cache=writeback|none][,engine=io_uring|threads]
//       [,queues=N][,device=on|off][,TRANSPORT KEYS]
block::DiskOptions parse_disk_spec(std::string_view spec);

//   tag=NAME,socket=PATH[,reply_timeout_ms=N]
fs::FsOptions parse_fs_spec(std::string_view spec);

//   cid=N
vsock::VsockOptions parse_vsock_spec(std::string_view spec);

}  // namespace kvmmio::vmm
