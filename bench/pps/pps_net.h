// SPDX-License-Identifier: BSD-2-Clause
// udp_pps's two ends. A run is set up over a TCP control connection from
// the client to the server, and the datagrams go over UDP:
//
//   client -> server  "run id=ID,payload=N,seconds=S,rate=R,batch=B,flows=F,sender=client|server,port=P"
//   server -> client  "ready port=P"  (the server receives: its UDP port)
//                     "ready"         (the server sends, to the client's port P)
//   sender -> receiver, after its last datagram: "sent count=N,seconds=S"
//   server -> client  "counts received=..,lost=..,duplicates=..,reordered=..,stray=..,sources=.."
//                     (only when the server received)
//
// The sender's count goes over TCP because UDP may lose any datagram,
// including a final one. After the count arrives the receiver keeps
// reading until its socket has been quiet for half a second (what was
// queued before the count still counts), then accounts for loss by
// sequence number (SeqTracker). With F flows the sender opens F UDP
// sockets (F source ports) and sends its batches to them in turn; the
// receiver's one socket takes them all, so datagrams of different flows
// may count as reordered; the receiver counts their source ports
// (sources=). The run's id in every datagram keeps a
// late datagram of an earlier run out of the count.
#pragma once

#include "bench/pps/pps_core.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::pps {

// The server's control listener on `port` (0: an ephemeral one), IPv6 and
// IPv4. Throws std::system_error.
UniqueFd listen_control(int port);
int local_port(int fd);

// One client's run on `listener`. Throws std::runtime_error (or
// std::system_error) when the run cannot complete; the server goes on.
void serve_one(int listener);

// The client's run (o.mode is kClient). Throws like serve_one.
Result run_client(const Options& o);

}  // namespace kvmmio::pps
