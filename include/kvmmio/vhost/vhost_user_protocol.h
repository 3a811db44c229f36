// SPDX-License-Identifier: BSD-2-Clause
// The vhost-user protocol's wire format, the part a front end (the VMM)
// speaks: message numbers, header flags, payloads, and the one checked
// reader of what a backend sends back. Every message is a 12-byte header
// (request, flags, payload size, native-endian u32s) and a payload; file
// descriptors travel beside it as SCM_RIGHTS ancillary data.
//
// The backend is another process, so its replies are untrusted input:
// check_reply() takes a header and payload as they came off the socket and
// accepts only the exact reply that was awaited (version 1, the reply bit,
// the same request, the payload size that request's reply has), or says
// what was wrong. Nothing here does I/O (fuzz/vhost_user_fuzz.cc feeds it
// arbitrary bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "kvmmio/base/export.h"

namespace kvmmio::vhost::user {

// Front end to backend requests (the vhost-user specification's numbers).
enum class Request : uint32_t {
  kGetFeatures = 1,
  kSetFeatures = 2,
  kSetOwner = 3,
  kResetOwner = 4,
  kSetMemTable = 5,
  kSetVringNum = 8,
  kSetVringAddr = 9,
  kSetVringBase = 10,
  kGetVringBase = 11,
  kSetVringKick = 12,
  kSetVringCall = 13,
  kSetVringErr = 14,
  kGetProtocolFeatures = 15,
  kSetProtocolFeatures = 16,
  kGetQueueNum = 17,
  kSetVringEnable = 18,
  kGetConfig = 24,
};
KVMMIO_EXPORT const char* to_string(Request request);

// Header flags: bits 0-1 the version (always 1), then reply and need-reply.
inline constexpr uint32_t kVersion = 0x1;
inline constexpr uint32_t kVersionMask = 0x3;
inline constexpr uint32_t kFlagReply = 1u << 2;
inline constexpr uint32_t kFlagNeedReply = 1u << 3;

// A virtio feature bit of vhost-user's own: the backend speaks
// GET/SET_PROTOCOL_FEATURES.
inline constexpr unsigned kFeatureProtocolFeatures = 30;

// Protocol feature bits this front end knows.
namespace protocol_feature {
inline constexpr unsigned kMq = 0;         // GET_QUEUE_NUM
inline constexpr unsigned kReplyAck = 3;   // NEED_REPLY answered with a u64 status
inline constexpr unsigned kConfig = 9;     // GET_CONFIG
}  // namespace protocol_feature

// SET_VRING_KICK/CALL/ERR's u64: the vring index in bits 0-7, and this bit
// when no fd comes with it (the ring is polled, or its fd taken away).
inline constexpr uint64_t kVringNoFd = 1u << 8;

// At most this many regions (and fds) in SET_MEM_TABLE.
inline constexpr size_t kMaxMemRegions = 8;

struct Header {
  uint32_t request = 0;
  uint32_t flags = 0;
  uint32_t size = 0;
};
static_assert(sizeof(Header) == 12);

struct VringState {
  uint32_t index = 0;
  uint32_t num = 0;
};

struct VringAddr {
  uint32_t index = 0;
  uint32_t flags = 0;
  uint64_t desc_user_addr = 0;
  uint64_t used_user_addr = 0;
  uint64_t avail_user_addr = 0;
  uint64_t log_guest_addr = 0;
};
static_assert(sizeof(VringAddr) == 40);

struct MemRegion {
  uint64_t guest_phys_addr = 0;
  uint64_t memory_size = 0;
  uint64_t userspace_addr = 0;
  uint64_t mmap_offset = 0;
};

struct MemTable {
  uint32_t nregions = 0;
  uint32_t padding = 0;
  MemRegion regions[kMaxMemRegions];
};
static_assert(sizeof(MemTable) == 8 + kMaxMemRegions * 32);

// GET_CONFIG's payload: where, how much, then the bytes (at most 256).
inline constexpr uint32_t kMaxConfigSize = 256;
struct ConfigHeader {
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t flags = 0;
};

// The largest reply payload any awaited reply has (GET_CONFIG's); a header
// announcing more is refused before anything is read.
inline constexpr uint32_t kMaxReplyPayload = sizeof(ConfigHeader) + kMaxConfigSize;

// The reply the front end waits for after sending `request`.
struct Awaited {
  Request request = Request::kGetFeatures;
  // The message went with NEED_REPLY (REPLY_ACK negotiated): the reply is
  // a u64 status, 0 for success.
  bool ack = false;
  uint32_t index = 0;          // GET_VRING_BASE: the vring asked about
  uint32_t config_offset = 0;  // GET_CONFIG: the bytes asked for
  uint32_t config_size = 0;
};

// The payload size of the awaited reply: 8 for the u64 replies, REPLY_ACK's
// status and GET_VRING_BASE's state; GET_CONFIG's is its header and the
// bytes asked for; nullopt for a request without a reply.
KVMMIO_EXPORT std::optional<uint32_t> reply_size(const Awaited& awaited);

// What is wrong with the header of what came back for `awaited` (version,
// reply flag, request, payload size), or nullopt when it is that reply's.
// Checked before the payload is read: the size it announces is then the
// exact size to read, never more than kMaxReplyPayload.
KVMMIO_EXPORT std::optional<std::string> check_reply_header(const Awaited& awaited, const Header& header);

// What is wrong with the payload (exactly the size the header announced):
// GET_VRING_BASE's state for another vring, GET_CONFIG's header not the
// range asked for. Values themselves (features, a vring base, an ack's
// status) are the caller's to judge.
KVMMIO_EXPORT std::optional<std::string> check_reply_payload(const Awaited& awaited,
                                                             std::span<const uint8_t> payload);

}  // namespace kvmmio::vhost::user
