// SPDX-License-Identifier: BSD-2-Clause
// VhostUserFrontend: the VMM's end of a vhost-user connection, the backend
// a separate process (virtiofsd, a user-space switch) that reaches guest
// RAM and the queues itself. It gets what a kernel vhost device gets
// (vhost_device.h), over a unix socket instead of ioctls: the memory table
// as the RAM regions' files (each region's memfd, mapped by the backend),
// and per vring its size, base, addresses (this process's addresses of the
// rings, which the backend turns into its own through the table), the
// queue's ioeventfd as kick and the device's irqfd as call. Once set up,
// the guest and the backend talk with this process out of the path.
//
// The backend is not trusted to answer, or to answer right: every reply is
// awaited for at most the reply timeout and read through
// vhost_user_protocol.h's checks; a closed socket, a stall, or a wrong
// reply throws BackendError naming the backend and what happened, and the
// connection is then broken (every later call throws at once), so the
// device can go to DEVICE_NEEDS_RESET within a bounded time. Sends never
// block either: the socket is non-blocking and a send waits for room at
// most the same timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_device.h"
#include "kvmmio/vhost/vhost_user_protocol.h"

namespace kvmmio::vhost {

class KVMMIO_EXPORT BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class KVMMIO_EXPORT VhostUserFrontend {
 public:
  // The longest wait for one reply (or for room to send one message), and
  // the most a caller may set it to (a vCPU waits that long at most for
  // each set-up message of a stalled backend).
  static constexpr std::chrono::milliseconds kDefaultReplyTimeout{2000};
  static constexpr std::chrono::milliseconds kMaxReplyTimeout{60000};

  // Over a unix stream socket connected to the backend (the program
  // connects it, by the path rules it applies to every user-given path);
  // `name` says which backend in messages. The socket is made
  // non-blocking here.
  VhostUserFrontend(UniqueFd socket, std::string name,
                    std::chrono::milliseconds reply_timeout = kDefaultReplyTimeout);

  VhostUserFrontend(VhostUserFrontend&&) noexcept = default;
  VhostUserFrontend& operator=(VhostUserFrontend&&) noexcept = default;

  const std::string& name() const { return name_; }
  // False once a call failed: the connection is out of step, and every
  // call throws until a new connection.
  bool usable() const { return socket_.valid() && !broken_; }
  int socket_fd() const { return socket_.get(); }

  // SET_OWNER, GET_FEATURES, and, when the backend offers them,
  // GET/SET_PROTOCOL_FEATURES for those of `wanted_protocol` it has
  // (REPLY_ACK is always asked for: with it every set-up message is
  // confirmed). Returns the backend's virtio features.
  uint64_t start(uint64_t wanted_protocol = 0);
  uint64_t features() const { return features_; }
  uint64_t protocol_features() const { return protocol_features_; }
  bool has_protocol_feature(unsigned bit) const { return (protocol_features_ >> bit) & 1; }
  // Whether VHOST_USER_F_PROTOCOL_FEATURES was negotiated: then every
  // vring starts disabled until SET_VRING_ENABLE.
  bool protocol_negotiated() const { return protocol_negotiated_; }

  // Closes the connection (a backend seen gone): every later call throws.
  void disconnect() {
    socket_.reset();
    broken_ = true;
  }

  // SET_FEATURES with the guest's accepted features (and the protocol
  // features bit when it was negotiated). std::invalid_argument for
  // features the backend does not offer.
  void set_features(uint64_t guest_features);
  // GET_QUEUE_NUM (needs the MQ protocol feature).
  uint64_t queue_num();
  // SET_MEM_TABLE: every RAM region with its file. std::invalid_argument
  // for a region without one (an embedder's own mapping) or more than
  // user::kMaxMemRegions regions.
  void set_mem_table(const GuestMemory& memory);
  // SET_VRING_NUM, BASE, ADDR (rings checked inside guest RAM, as
  // VhostDevice::setup_vring), KICK, CALL, ERR.
  void setup_vring(const GuestMemory& memory, const Vring& vring);
  // SET_VRING_KICK/CALL/ERR alone; -1 sends "no fd".
  void set_vring_kick(unsigned index, int fd);
  void set_vring_call(unsigned index, int fd);
  void set_vring_err(unsigned index, int fd);
  // SET_VRING_ENABLE (with the protocol features negotiated, rings start
  // disabled).
  void set_vring_enable(unsigned index, bool enable);
  // GET_VRING_BASE: stops the vring, returns where the backend stopped.
  uint16_t vring_base(unsigned index);
  // GET_CONFIG (needs the CONFIG protocol feature): `out.size()` bytes of
  // the device's config space from `offset`, at most user::kMaxConfigSize.
  void get_config(uint32_t offset, std::span<uint8_t> out);

 private:
  // Sends one message with `fds` beside it; with REPLY_ACK negotiated and
  // `confirm`, also asks for and awaits the status.
  void send(user::Request request, std::span<const uint8_t> payload, std::span<const int> fds = {},
            bool confirm = true);
  void send_u64(user::Request request, uint64_t value, std::span<const int> fds = {});
  // Awaits the reply `awaited` describes into `out` (exactly its size).
  void receive(const user::Awaited& awaited, std::span<uint8_t> out);
  uint64_t request_u64(user::Request request);
  void set_vring_fd(user::Request request, unsigned index, int fd);
  // Reads or writes exactly `len` bytes by the deadline.
  void read_exact(uint8_t* dst, size_t len, std::chrono::steady_clock::time_point deadline, const char* what);
  void wait_for(short events, std::chrono::steady_clock::time_point deadline, const char* what);
  [[noreturn]] void fail(const std::string& what);

  UniqueFd socket_;
  std::string name_;
  std::chrono::milliseconds timeout_;
  uint64_t features_ = 0;
  uint64_t protocol_features_ = 0;
  bool protocol_negotiated_ = false;
  bool broken_ = false;
};

}  // namespace kvmmio::vhost
