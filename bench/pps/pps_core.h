// SPDX-License-Identifier: BSD-2-Clause
// udp_pps's pure parts, kept apart from the sockets so the unit tests reach
// them: the command line, the datagram header, the loss accounting from
// sequence numbers, and the result document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvmmio::pps {

inline constexpr int kDefaultPort = 5400;
// Every datagram starts with the header: magic, the run's id, the sequence
// number. A payload is at least that, at most what IPv4 carries in one
// datagram.
inline constexpr size_t kHeaderBytes = 16;
inline constexpr size_t kMaxPayload = 65507;
// A sender stops at this many datagrams (at 5 Mpps, 200 s), so that the
// receiver's bitmap of sequence numbers stays under 128 MiB.
inline constexpr uint64_t kMaxSeq = uint64_t{1} << 30;
inline constexpr unsigned kMaxFlows = 64;

struct Options {
  enum class Mode { kServer, kClient };
  Mode mode = Mode::kClient;
  std::string host;  // client: the server
  int port = kDefaultPort;  // the server's TCP control port
  double seconds = 3;
  size_t payload = 64;
  uint64_t rate = 0;  // datagrams per second; 0: as fast as the sender can
  unsigned batch = 64;  // datagrams per sendmmsg / recvmmsg
  // UDP flows the sender spreads its batches over, round robin: one socket
  // each, so each has its own source port. A multiqueue tap or NIC hashes
  // flows to queues; one flow always lands on one queue.
  unsigned flows = 1;
  bool reverse = false;  // client: the server sends, the client receives
  bool json = false;
};

// argv without the program name. Throws UserError naming the argument.
Options parse_options(const std::vector<std::string>& args);
std::string usage();

// The datagram header, little-endian on the wire.
void write_header(uint8_t* payload, uint32_t run_id, uint64_t seq);
// The sequence number when `data` carries `run_id`'s header; otherwise
// false (a datagram of another run, or not udp_pps's).
bool read_header(const uint8_t* data, size_t len, uint32_t run_id, uint64_t& seq);

// What a receiver makes of the sequence numbers that arrived. Sequence
// numbers are 0, 1, ... in the order sent; a number seen twice is a
// duplicate (counted once), a new number below the highest seen so far
// arrived reordered (it still counts as received).
class SeqTracker {
 public:
  explicit SeqTracker(uint32_t run_id) : run_id_(run_id) {}
  void add(const uint8_t* data, size_t len);  // one datagram, header and all
  void add_seq(uint64_t seq);

  uint64_t datagrams() const { return datagrams_; }  // all that arrived, strays included
  uint64_t unique() const { return unique_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t reordered() const { return reordered_; }
  uint64_t stray() const { return stray_; }  // other runs', malformed, or beyond kMaxSeq

  struct Loss {
    uint64_t sent = 0;
    uint64_t received = 0;  // distinct sequence numbers below `sent`
    uint64_t lost = 0;      // sent - received
    uint64_t beyond = 0;    // distinct numbers >= sent: the sender's count was short
  };
  // Against the sender's count: received + lost == sent always.
  Loss account(uint64_t sent) const;

 private:
  uint32_t run_id_;
  std::vector<uint64_t> seen_;  // bitmap by sequence number
  uint64_t datagrams_ = 0, unique_ = 0, duplicates_ = 0, reordered_ = 0, stray_ = 0;
  uint64_t next_ = 0;  // one above the highest number seen
};

// One run's outcome, as the client prints it.
struct Result {
  std::string sender;  // "client" or "server"
  size_t payload = 0;
  uint64_t rate = 0;
  unsigned flows = 1;
  SeqTracker::Loss loss;
  uint64_t duplicates = 0, reordered = 0, stray = 0;
  uint64_t sources = 0;  // distinct source ports the receiver saw (the flows that arrived)
  double seconds = 0;  // the sender's sending time
};
std::string to_json(const Result& r);   // one line
std::string to_text(const Result& r);   // one line, for people

}  // namespace kvmmio::pps
