// SPDX-License-Identifier: BSD-2-Clause
// udp_pps: UDP packet rates with small packets, the figure iperf3 -u cannot
// give (it tops out on its own per-packet overhead first).
//
//   udp_pps server [--port P]
//   udp_pps client HOST [--port P] [--seconds S] [--payload BYTES]
//                  [--rate PPS] [--batch N] [--flows N] [--reverse] [--json]
//
// The client connects to the server's TCP control port, then one end sends
// numbered UDP datagrams of BYTES payload (default 64) in sendmmsg batches
// for S seconds, as fast as it can or at PPS, and the other receives them
// with recvmmsg: the client sends, or with --reverse the server does. The
// client prints datagrams sent, received and lost (by sequence number) and
// the rates. The server serves one run at a time until killed.
// bench/pps/pps_net.h describes the control protocol.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/pps/pps_core.h"
#include "bench/pps/pps_net.h"
#include "kvmmio/base/error.h"

namespace pps = kvmmio::pps;

int main(int argc, char** argv) {
  pps::Options o;
  try {
    o = pps::parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const kvmmio::UserError& e) {
    std::fprintf(stderr, "udp_pps: %s\n%s", e.what(), pps::usage().c_str());
    return 2;
  }
  try {
    if (o.mode == pps::Options::Mode::kServer) {
      const kvmmio::UniqueFd listener = pps::listen_control(o.port);
      for (;;) {
        try {
          pps::serve_one(listener.get());
        } catch (const std::exception& e) {
          std::fprintf(stderr, "udp_pps server: run abandoned: %s\n", e.what());
        }
      }
    }
    const pps::Result r = pps::run_client(o);
    std::printf("%s\n", (o.json ? pps::to_json(r) : pps::to_text(r)).c_str());
    return 0;
  } catch (const kvmmio::UserError& e) {
    std::fprintf(stderr, "udp_pps: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "udp_pps: %s\n", e.what());
    return 1;
  }
}
