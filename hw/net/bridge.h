// SPDX-License-Identifier: BSD-2-Clause
// add_to_bridge: NetOptions::bridge, the tap made a port of an existing
// Linux bridge (SIOCBRADDIF), so VMs on one host reach each other and the
// bridge's uplink. Internal to hw/net; VirtioNet calls it once, at set-up.
//
// The bridge is not created: which bridge a host has, with which uplink and
// addresses, is its administrator's decision, so a missing one is an error
// naming the command that makes it. A tap already in that bridge is left
// as it is (no privilege needed); one in another bridge is an error.
// Adding needs CAP_NET_ADMIN. A tap removed and re-created while the VM
// runs (TapSupervisor re-attaches to it) is not added again.
#pragma once

#include <string>

#include "kvmmio/base/setting_words.h"

namespace kvmmio::net {

// UserError naming the fix when `bridge` does not exist, is no bridge, the
// tap is another bridge's, or privilege is lacking; in `words`
// (NetOptions::words), the device known as {"tap", TAP}.
void add_to_bridge(const std::string& tap, const std::string& bridge,
                   const SettingWords& words = struct_words());

}  // namespace kvmmio::net
